//go:build !mutation_tracedropped

package service

import (
	"context"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/tracing"
)

// runTrace returns ctx carrying, as the remote parent of execution e's
// span, the trace context e was submitted with, which every attempt of
// its run keeps: the span joins its submitter's trace, on whichever
// worker runs it, attempt after attempt.
func runTrace(ctx context.Context, e *corral.Execution) context.Context {
	return tracing.FromHeader(ctx, e.TraceParent, e.TraceState)
}
