package telemetry

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// Span limits: what a span keeps of its attributes, events and links (the
// OpenTelemetry SDK's defaults); the rest is counted as dropped.
const (
	maxAttrs  = 128
	maxEvents = 128
	maxLinks  = 128
)

// Provider is the CLI's TracerProvider while telemetry is on. It is safe
// for concurrent use. Spans it samples are recorded here and handed to the
// companion exporter when they end; spans it does not sample carry their
// context (for TRACEPARENT) and record nothing.
type Provider struct {
	embedded.TracerProvider

	sampler sampler
	exp     *exporter

	mu      sync.Mutex
	tracers map[scope]*tracer
}

// Start returns the Provider for c, or nil when telemetry is off, in
// which case nothing was started. It fails when telemetry is on but the
// companion exporter cannot be found (ErrNoExporter), so that spans asked
// for are never silently lost. An OTEL_TRACES_SAMPLER it does not know is
// reported through Config.Warn, and the default (parentbased_always_on)
// used.
func Start(c Config) (*Provider, error) {
	if !c.Enabled() {
		return nil, nil
	}
	if c.Warn == nil {
		c.Warn = func(msg string) { fmt.Fprintln(os.Stderr, "corral: telemetry:", msg) }
	}
	path, err := c.exporterPath()
	if err != nil {
		return nil, err
	}
	s, err := parseSampler(c.lookup("OTEL_TRACES_SAMPLER"), c.lookup("OTEL_TRACES_SAMPLER_ARG"))
	if err != nil {
		c.Warn(err.Error() + "; using parentbased_always_on")
	}
	return &Provider{sampler: s, exp: newExporter(path, &c), tracers: map[scope]*tracer{}}, nil
}

// Tracer returns the tracer of an instrumentation scope.
func (p *Provider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	cfg := trace.NewTracerConfig(opts...)
	key := scope{name: name, version: cfg.InstrumentationVersion(), schemaURL: cfg.SchemaURL()}
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.tracers[key]
	if !ok {
		t = &tracer{p: p, scope: key}
		p.tracers[key] = t
	}
	return t
}

// Shutdown ends the export: the spans ended so far are handed to the
// companion, which exports them and exits; Shutdown waits for it until
// ctx is done or the flush timeout has passed, whichever comes first, and
// then kills it. Spans that end later are dropped. It returns an error
// when spans were dropped or the export could not finish.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.exp.shutdown(ctx)
}

// scope is an instrumentation scope.
type scope struct{ name, version, schemaURL string }

// tracer starts spans of one scope.
type tracer struct {
	embedded.Tracer
	p     *Provider
	scope scope
}

// Start starts a span under the span ctx carries (or a new trace).
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if !cfg.NewRoot() {
		parent = trace.SpanContextFromContext(ctx)
	}
	sc := trace.SpanContextConfig{SpanID: newSpanID(), TraceState: parent.TraceState()}
	if parent.IsValid() {
		sc.TraceID = parent.TraceID()
	} else {
		sc.TraceID = newTraceID()
		sc.TraceState = trace.TraceState{}
	}
	if t.p.sampler.sample(parent, sc.TraceID) {
		sc.TraceFlags = trace.FlagsSampled
	}
	spanCtx := trace.NewSpanContext(sc)
	if !spanCtx.IsSampled() {
		s := unsampled{sc: spanCtx, p: t.p}
		return trace.ContextWithSpan(ctx, s), s
	}
	s := newSpan(t, name, spanCtx, parent, &cfg)
	return trace.ContextWithSpan(ctx, s), s
}

func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		putUint64(id[:8], rand.Uint64())
		putUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		putUint64(id[:], rand.Uint64())
	}
	return id
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}
