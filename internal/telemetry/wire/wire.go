// Package wire is the form in which corral hands its ended spans to its
// exporter, corral-otlp, on the exporter's standard input: first a Header,
// one JSON object on a line; then each span as a frame, its length as a
// uvarint and its fields in a fixed order (see AppendSpan).
//
// A span carries what an OTLP span carries (identity, parentage, name,
// kind, times, attributes, events, links, status, instrumentation scope),
// in the OpenTelemetry API's own types and nothing of the SDK: corral
// itself links only the API, so that a command started with telemetry off
// pays nothing for the SDK, its exporters, protobuf or gRPC (see
// docs/observability.md). The frames are written and read by hand, without
// reflection: a span costs a few microseconds on each side, which keeps
// telemetry's share of a short command small.
package wire

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Header is the exporter's configuration, sent once, before the spans.
type Header struct {
	// Env holds the OTEL_* variables (and the operator's flags turned
	// into them) that configure the exporter, its resource and its batch
	// processor, as "KEY=VALUE". They travel here rather than in the
	// exporter's environment, so that headers with credentials
	// (OTEL_EXPORTER_OTLP_HEADERS) never show in /proc/PID/environ.
	Env []string `json:"env"`
	// FlushTimeout bounds the exporter's final flush, counted from the
	// end of its input; after it the exporter exits, spans exported or
	// not.
	FlushTimeout time.Duration `json:"flush_timeout"`
	// ServiceVersion and Pid describe the corral process that made the
	// spans (service.version, process.pid).
	ServiceVersion string `json:"service_version,omitempty"`
	Pid            int    `json:"pid,omitempty"`
	// Command is the corral subcommand (run, headless, mcp), recorded as
	// process.command.
	Command string `json:"command,omitempty"`
}

// Span is one ended span.
type Span struct {
	TraceID      trace.TraceID
	SpanID       trace.SpanID
	Parent       trace.SpanID // zero for a root
	ParentRemote bool
	Flags        trace.TraceFlags
	TraceState   string

	Name       string
	Kind       trace.SpanKind
	Start, End int64 // unix nanoseconds

	Attrs   []attribute.KeyValue
	Events  []Event
	Links   []Link
	Status  codes.Code
	Message string

	DroppedAttrs, DroppedEvents, DroppedLinks int

	Scope, ScopeVersion string
}

// Event is a span event.
type Event struct {
	Name  string
	Time  int64
	Attrs []attribute.KeyValue
}

// Link is a link to another span.
type Link struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	Flags      trace.TraceFlags
	TraceState string
	Remote     bool
	Attrs      []attribute.KeyValue
}
