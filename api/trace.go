package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/corralrun/corral/internal/tracing"
)

// traced returns the context of a request that submits a task (a task, a
// retry, a schedule's trigger): r's, carrying the W3C trace context of its
// traceparent and tracestate headers, when valid, as the remote parent of
// the submission's span (several tracestate headers are one list, as the
// W3C specification says). A service that does not trace ignores it
// (service.Config.Trace).
func traced(r *http.Request) context.Context {
	tp := r.Header.Get("traceparent")
	if tp == "" {
		return r.Context()
	}
	return tracing.FromHeader(r.Context(), tp, strings.Join(r.Header.Values("tracestate"), ","))
}
