package main

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

// withTelemetry gives each HTTP request the server's content setting and,
// when the request brings no trace context of its own, the caller's
// (TRACEPARENT, in base). It is here, not in internal/cliflag with the
// telemetry flags, because it is HTTP's: cliflag's other users, corral
// among them, must not link net/http for it.
func withTelemetry(h http.Handler, base context.Context) http.Handler {
	sc := trace.SpanContextFromContext(base)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := tracing.CopyContent(r.Context(), base)
		if sc.IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
