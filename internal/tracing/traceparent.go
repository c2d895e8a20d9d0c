package tracing

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The environment variables of the W3C trace context, as the OpenTelemetry
// specification names them for process environments.
const (
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
)

// Traceparent formats sc as a W3C traceparent header value.
func Traceparent(sc trace.SpanContext) string {
	flags := sc.TraceFlags() & trace.FlagsSampled
	return "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + flags.String()
}

// withContext sets TRACEPARENT and TRACESTATE in a copy of env.
func withContext(env []string, sc trace.SpanContext) []string {
	state := sc.TraceState().String()
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.EqualFold(k, EnvTraceParent) || strings.EqualFold(k, EnvTraceState) {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, EnvTraceParent+"="+Traceparent(sc))
	if state != "" {
		out = append(out, EnvTraceState+"="+state)
	}
	return out
}

// FromEnv returns ctx carrying, as the remote parent of the spans started
// under it, the trace context that getenv gives in TRACEPARENT and
// TRACESTATE; ctx itself when TRACEPARENT is unset or not a valid W3C
// traceparent.
func FromEnv(ctx context.Context, getenv func(string) string) context.Context {
	tp := getenv(EnvTraceParent)
	if tp == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts := getenv(EnvTraceState); ts != "" {
		carrier["tracestate"] = ts
	}
	return propagation.TraceContext{}.Extract(ctx, carrier)
}

// FromHeader is FromEnv for a traceparent and tracestate given as values
// (an HTTP header, an MCP request's _meta).
func FromHeader(ctx context.Context, traceparent, tracestate string) context.Context {
	return FromEnv(ctx, func(k string) string {
		if k == EnvTraceParent {
			return traceparent
		}
		return tracestate
	})
}
