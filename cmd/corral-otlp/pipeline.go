package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/telemetry/wire"
)

// pipeline is the SDK's batch span processor in front of the OTLP
// exporter, fed with spans that were recorded in corral.
type pipeline struct {
	res *resource.Resource
	bsp sdktrace.SpanProcessor
}

func newPipeline(ctx context.Context, h *wire.Header) (*pipeline, error) {
	var errs atomic.Int64
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if errs.Add(1) <= 3 {
			fmt.Fprintln(os.Stderr, "corral-otlp:", err)
		}
	}))
	exp, err := newExporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := newResource(ctx, h)
	if err != nil {
		// A bad OTEL_RESOURCE_ATTRIBUTES still leaves a usable resource.
		fmt.Fprintln(os.Stderr, "corral-otlp: resource:", err)
	}
	return &pipeline{res: res, bsp: sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBlocking())}, nil
}

// newExporter builds the OTLP trace exporter of the protocol asked for;
// it reads its endpoint, headers, timeout, compression and TLS settings
// from the OTEL_EXPORTER_OTLP_* variables.
func newExporter(ctx context.Context) (*otlptrace.Exporter, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.TrimSpace(proto) {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported: want http/protobuf or grpc", proto)
}

// newResource describes corral: service.name "corral" (OTEL_SERVICE_NAME
// and OTEL_RESOURCE_ATTRIBUTES win), its version, the process and the
// command, the host and the SDK.
func newResource(ctx context.Context, h *wire.Header) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", "corral")}
	if h.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", h.ServiceVersion))
	}
	if h.Pid > 0 {
		attrs = append(attrs, attribute.Int("process.pid", h.Pid))
	}
	if h.Command != "" {
		attrs = append(attrs, attribute.String("process.command", "corral "+h.Command))
	}
	return resource.New(ctx,
		resource.WithAttributes(attrs...),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithFromEnv(),
	)
}

// add hands one span to the batch processor.
func (p *pipeline) add(w *wire.Span) { p.bsp.OnEnd(p.stub(w).Snapshot()) }

// stub is the span as the SDK's read-only span.
func (p *pipeline) stub(w *wire.Span) *tracetest.SpanStub {
	s := &tracetest.SpanStub{
		Name:                 w.Name,
		SpanContext:          spanContext(w.TraceID, w.SpanID, w.Flags, w.TraceState, false),
		SpanKind:             w.Kind,
		StartTime:            time.Unix(0, w.Start),
		EndTime:              time.Unix(0, w.End),
		Attributes:           w.Attrs,
		Status:               sdktrace.Status{Code: w.Status, Description: w.Message},
		DroppedAttributes:    w.DroppedAttrs,
		DroppedEvents:        w.DroppedEvents,
		DroppedLinks:         w.DroppedLinks,
		Resource:             p.res,
		InstrumentationScope: instrumentation.Scope{Name: w.Scope, Version: w.ScopeVersion},
	}
	if w.Parent.IsValid() {
		s.Parent = spanContext(w.TraceID, w.Parent, w.Flags, w.TraceState, w.ParentRemote)
	}
	for _, e := range w.Events {
		s.Events = append(s.Events, sdktrace.Event{Name: e.Name, Time: time.Unix(0, e.Time), Attributes: e.Attrs})
	}
	for _, l := range w.Links {
		s.Links = append(s.Links, sdktrace.Link{SpanContext: spanContext(l.TraceID, l.SpanID, l.Flags, l.TraceState, l.Remote), Attributes: l.Attrs})
	}
	return s
}

// spanContext builds a span context; a trace state that does not parse is
// left out.
func spanContext(tid trace.TraceID, sid trace.SpanID, flags trace.TraceFlags, state string, remote bool) trace.SpanContext {
	cfg := trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: remote}
	if state != "" {
		cfg.TraceState, _ = trace.ParseTraceState(state)
	}
	return trace.NewSpanContext(cfg)
}

// shutdown flushes what the processor holds and shuts the exporter down.
func (p *pipeline) shutdown(ctx context.Context) error { return p.bsp.Shutdown(ctx) }
