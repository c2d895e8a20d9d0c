package api

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// traced returns the context of a request that submits a task (a task, a
// retry, a schedule's trigger): r's, carrying the W3C trace context of its
// traceparent and tracestate headers, when valid, as the remote parent of
// the submission's span. A service that does not trace ignores it
// (service.Config.Trace).
func traced(r *http.Request) context.Context {
	if r.Header.Get("traceparent") == "" {
		return r.Context()
	}
	return propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
}
