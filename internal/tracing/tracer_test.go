package tracing

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var testTracer = Tracer{Scope: "github.com/corralrun/corral/internal/tracing/test"}

// recorder is an SDK provider whose spans a test reads, sampling by the
// parent and every root.
func recorder(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, exp
}

// uninstalled has the test start with no provider installed, and end so.
func uninstalled(t *testing.T) {
	SetProvider(nil)
	t.Cleanup(func() { SetProvider(nil) })
}

// named returns the one span of that name, or fails.
func named(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var got []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d spans %q, want 1 (of %d)", len(got), name, len(exp.GetSpans()))
	}
	return got[0]
}

// TestSpansFollowTheContextsProviderWithNoneInstalled: with nothing
// installed, a span under a caller's span comes from the caller's
// provider, as its child; under a span that provider did not sample, the
// provider still decides (a span of its own, unsampled, not the caller's
// passed through).
func TestSpansFollowTheContextsProviderWithNoneInstalled(t *testing.T) {
	uninstalled(t)
	tp, exp := recorder(t)
	ctx, caller := tp.Tracer("caller").Start(context.Background(), "caller")
	_, span := testTracer.Start(ctx, "corral.work")
	span.End()
	caller.End()
	got := named(t, exp, "corral.work")
	if got.Parent.SpanID() != caller.SpanContext().SpanID() || got.SpanContext.TraceID() != caller.SpanContext().TraceID() {
		t.Errorf("corral's span has parent %v in trace %v, want the caller's %v", got.Parent.SpanID(), got.SpanContext.TraceID(), caller.SpanContext())
	}
	if got.InstrumentationScope.Name != testTracer.Scope {
		t.Errorf("scope %q", got.InstrumentationScope.Name)
	}

	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	ctx, root := never.Tracer("caller").Start(context.Background(), "root")
	_, child := testTracer.Start(ctx, "corral.work")
	sc, rc := child.SpanContext(), root.SpanContext()
	if !sc.IsValid() || sc.TraceID() != rc.TraceID() || sc.SpanID() == rc.SpanID() || sc.IsSampled() || child.IsRecording() {
		t.Errorf("under an unsampled parent %v: span %v (recording %v), want an unsampled span of its own in the same trace", rc, sc, child.IsRecording())
	}
}

// TestInstalledProviderWinsOverTheContexts: an installed provider starts
// corral's spans even under another provider's span, as children of it;
// one installed later takes over, and uninstalling goes back to the
// context's.
func TestInstalledProviderWinsOverTheContexts(t *testing.T) {
	uninstalled(t)
	callerTP, callerExp := recorder(t)
	first, firstExp := recorder(t)
	second, secondExp := recorder(t)
	ctx, caller := callerTP.Tracer("caller").Start(context.Background(), "caller")
	defer caller.End()

	SetProvider(first)
	if Provider() != first {
		t.Fatalf("Provider() = %v, want the installed one", Provider())
	}
	_, span := testTracer.Start(ctx, "one")
	span.End()
	SetProvider(second)
	_, span = testTracer.Start(ctx, "two")
	span.End()
	SetProvider(nil)
	if Provider() != nil {
		t.Fatalf("Provider() = %v after SetProvider(nil)", Provider())
	}
	_, span = testTracer.Start(ctx, "three")
	span.End()

	if got := named(t, firstExp, "one"); got.Parent.SpanID() != caller.SpanContext().SpanID() {
		t.Errorf("the installed provider's span is not the caller's child: parent %v", got.Parent.SpanID())
	}
	named(t, secondExp, "two")
	named(t, callerExp, "three")
	if n := len(callerExp.GetSpans()) + len(firstExp.GetSpans()) + len(secondExp.GetSpans()); n != 3 {
		t.Errorf("%d spans recorded in all, want 3", n)
	}
}

// TestNoProviderNoSpanStartsNothing: with nothing installed and no span
// in the context, Start returns the context itself and a span that
// records nothing, and allocates nothing; a context carrying only a
// caller's remote trace context (TRACEPARENT) keeps it, for the processes
// started under it.
func TestNoProviderNoSpanStartsNothing(t *testing.T) {
	uninstalled(t)
	ctx := context.Background()
	got, span := testTracer.Start(ctx, "nothing")
	if got != ctx || span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("Start with no provider: context changed %v, span recording %v, context %v", got != ctx, span.IsRecording(), span.SpanContext())
	}
	if n := testing.AllocsPerRun(100, func() {
		_, s := testTracer.Start(ctx, "nothing")
		s.End()
	}); n != 0 {
		t.Errorf("%v allocations a span with no provider, want 0", n)
	}

	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	remote := FromHeader(ctx, tp, "")
	got, span = testTracer.Start(remote, "nothing")
	if span.IsRecording() || Traceparent(trace.SpanContextFromContext(got)) != tp {
		t.Errorf("under a remote parent alone: recording %v, traceparent %q, want %q", span.IsRecording(), Traceparent(trace.SpanContextFromContext(got)), tp)
	}
}
