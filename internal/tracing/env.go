//go:build !mutation_notraceparent

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// Env returns env with the W3C trace context of ctx's span in TRACEPARENT
// and TRACESTATE, for a process corral starts: an agent or a command that
// exports its own telemetry joins the same trace. An inherited TRACEPARENT
// or TRACESTATE is replaced (a TRACESTATE the span does not carry is
// removed). When ctx carries no valid span context, env is returned as is.
func Env(ctx context.Context, env []string) []string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return env
	}
	return withContext(env, sc)
}
