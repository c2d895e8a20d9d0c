package tracing

import (
	"context"
	"encoding/hex"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// The environment variables of the W3C trace context, as the OpenTelemetry
// specification names them for process environments.
const (
	EnvTraceParent = "TRACEPARENT"
	EnvTraceState  = "TRACESTATE"
)

// W3C traceparent values are written and read here by hand rather than
// through OpenTelemetry's propagation package, which imports net/http:
// every program that links proc would link the HTTP stack for four hex
// fields.

// traceparentLen is the length of a traceparent of version 00: version
// "-" trace-id "-" parent-id "-" trace-flags, in lowercase hex, 2 + 1 +
// 32 + 1 + 16 + 1 + 2 characters.
const traceparentLen = 55

// Traceparent formats sc as a W3C traceparent header value: version 00,
// its trace and span ids, and its sampled flag alone.
func Traceparent(sc trace.SpanContext) string {
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := byte(sc.TraceFlags() & trace.FlagsSampled)
	var b [traceparentLen]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:], []byte{flags})
	return string(b[:])
}

// parseTraceparent returns the remote span context that a traceparent and
// a tracestate value give, and false when traceparent is not a valid W3C
// traceparent (https://www.w3.org/TR/trace-context/#traceparent-header):
//   - every field is lowercase hex of its exact length, the four joined by
//     dashes; version ff is invalid;
//   - version 00 has exactly the four fields, and no flag but sampled and
//     random (the OpenTelemetry propagator's rule); a higher version is
//     read by its first four fields, and whatever follows them must begin
//     with a dash;
//   - an all-zero trace id or parent id is invalid.
//
// The flags kept are sampled and random. A tracestate that does not parse
// is dropped, and does not affect the traceparent, as the specification
// requires.
func parseTraceparent(tp, ts string) (trace.SpanContext, bool) {
	if len(tp) < traceparentLen || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return trace.SpanContext{}, false
	}
	var version, flags [1]byte
	var cfg trace.SpanContextConfig
	if !unhex(version[:], tp[0:2]) || !unhex(cfg.TraceID[:], tp[3:35]) ||
		!unhex(cfg.SpanID[:], tp[36:52]) || !unhex(flags[:], tp[53:55]) {
		return trace.SpanContext{}, false
	}
	const known = trace.FlagsSampled | trace.FlagsRandom
	switch {
	case version[0] == 0xff:
		return trace.SpanContext{}, false
	case version[0] == 0 && (len(tp) != traceparentLen || trace.TraceFlags(flags[0])&^known != 0):
		return trace.SpanContext{}, false
	case len(tp) > traceparentLen && tp[traceparentLen] != '-':
		return trace.SpanContext{}, false
	}
	cfg.TraceFlags = trace.TraceFlags(flags[0]) & known
	cfg.TraceState, _ = trace.ParseTraceState(ts)
	cfg.Remote = true
	sc := trace.NewSpanContext(cfg)
	return sc, sc.IsValid()
}

// unhex decodes s, lowercase hex of twice dst's length, into dst.
func unhex(dst []byte, s string) bool {
	for i := range dst {
		hi, ok1 := nibble(s[2*i])
		lo, ok2 := nibble(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
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
// traceparent. A TRACESTATE that does not parse is ignored.
func FromEnv(ctx context.Context, getenv func(string) string) context.Context {
	tp := getenv(EnvTraceParent)
	if tp == "" {
		return ctx
	}
	return FromHeader(ctx, tp, getenv(EnvTraceState))
}

// FromHeader is FromEnv for a traceparent and tracestate given as values
// (an HTTP header, an MCP request's _meta).
func FromHeader(ctx context.Context, traceparent, tracestate string) context.Context {
	sc, ok := parseTraceparent(traceparent, tracestate)
	if !ok {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}
