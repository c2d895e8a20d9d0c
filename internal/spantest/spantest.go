// Package spantest records the spans corral's library packages make, for
// their tests: it makes, once per test binary, an OpenTelemetry SDK
// provider with an in-memory exporter, sampling only the traces a test
// starts with Trace (every other run stays unsampled and records nothing),
// and installs it as corral's provider (as proc.SetTracerProvider does)
// at every Start, so tests of one package can share it, in parallel.
//
// Only tests import it; the library itself links the OpenTelemetry API
// alone.
package spantest

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

var (
	once     sync.Once
	exporter *tracetest.InMemoryExporter
	provider *sdktrace.TracerProvider
)

// install makes the provider, once, and installs it: again each time, in
// case a test of the binary installed another. Roots are never sampled; a
// span under a sampled parent is.
func install() {
	once.Do(func() {
		exporter = tracetest.NewInMemoryExporter()
		provider = sdktrace.NewTracerProvider(
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())),
			sdktrace.WithSyncer(exporter),
		)
	})
	tracing.SetProvider(provider)
}

// Trace is one test's trace.
type Trace struct {
	// Parent is the remote parent every span of the trace descends from,
	// as a caller's TRACEPARENT would give it.
	Parent trace.SpanContext
}

// Start returns a context under a fresh sampled remote parent, whose
// spans the returned Trace finds.
func Start(t testing.TB) (context.Context, *Trace) {
	t.Helper()
	install()
	var cfg trace.SpanContextConfig
	rand.Read(cfg.TraceID[:])
	rand.Read(cfg.SpanID[:])
	cfg.TraceFlags = trace.FlagsSampled
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	return trace.ContextWithRemoteSpanContext(context.Background(), sc), &Trace{Parent: sc}
}

// Spans returns the ended spans of the trace.
func (tr *Trace) Spans() []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range exporter.GetSpans() {
		if s.SpanContext.TraceID() == tr.Parent.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

// Wait returns the trace's spans once done reports true of them, or what
// there is after timeout.
func (tr *Trace) Wait(timeout time.Duration, done func([]tracetest.SpanStub) bool) []tracetest.SpanStub {
	end := time.Now().Add(timeout)
	for {
		s := tr.Spans()
		if done(s) || time.Now().After(end) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// All returns every ended span that was sampled: the tests' traces, and
// those under a sampled trace context from elsewhere (a client's).
func All() []tracetest.SpanStub {
	install()
	return exporter.GetSpans()
}

// Named returns the spans of that name.
func Named(spans []tracetest.SpanStub, name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Attr returns the value of a span's attribute, or nil.
func Attr(s tracetest.SpanStub, key string) any {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.AsInterface()
		}
	}
	return nil
}
