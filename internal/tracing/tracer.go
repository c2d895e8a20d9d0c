package tracing

import (
	"context"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"
)

// installed holds the provider of SetProvider, boxed so that an atomic
// pointer can hold an interface; nil while none is installed.
var installed atomic.Pointer[providerBox]

type providerBox struct{ tp trace.TracerProvider }

// SetProvider installs tp as the provider every corral span starts from
// (proc.SetTracerProvider documents the rule); nil uninstalls it. Safe
// for concurrent use: spans started after it returns use tp, spans
// already started end with the provider that started them.
func SetProvider(tp trace.TracerProvider) {
	if tp == nil {
		installed.Store(nil)
		return
	}
	installed.Store(&providerBox{tp: tp})
}

// Provider returns the provider SetProvider installed, or nil.
func Provider() trace.TracerProvider {
	if b := installed.Load(); b != nil {
		return b.tp
	}
	return nil
}

// noSpan is what trace.SpanFromContext gives for a context that carries
// no span.
var noSpan = trace.SpanFromContext(context.Background())

// Tracer starts the spans of one of corral's packages (the zero value is
// ready; Scope must be set). It must not be copied after first use.
type Tracer struct {
	// Scope names the instrumentation scope: the package's import path.
	Scope string

	last atomic.Pointer[scopedTracer] // the tracer of the provider used last
}

type scopedTracer struct {
	tp trace.TracerProvider
	t  trace.Tracer
}

// Start starts a span named name under the span ctx carries, from the
// provider that provider picks, and returns ctx with the span and the
// span. When there is no provider it starts nothing and returns ctx
// itself and the span ctx carries (a no-op span when it carries none):
// nothing is allocated and a caller's trace context still passes through.
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	tp := provider(ctx)
	if tp == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer(tp).Start(ctx, name, opts...)
}

// tracer returns tp's tracer of t's scope, taken once for as long as tp
// stays the provider in use (the common case: one provider for the whole
// program). Only a provider of a comparable type is remembered, so that
// comparing it with the next one cannot panic.
func (t *Tracer) tracer(tp trace.TracerProvider) trace.Tracer {
	if c := t.last.Load(); c != nil && c.tp == tp {
		return c.t
	}
	tr := tp.Tracer(t.Scope)
	if reflect.TypeOf(tp).Comparable() {
		t.last.Store(&scopedTracer{tp: tp, t: tr})
	}
	return tr
}
