//go:build mutation_tracedropped

// Mutant: An execution's span ignores the trace context kept with it: each attempt starts a trace of its own, not its submitter's.
// Guarantee: traces: a submitted traceparent holds for every attempt of the run, on any worker
// Caught: ./service TestTracedRunIsOneTraceAcrossItsRetry
package service

import (
	"context"

	"github.com/corralrun/corral"
)

// runTrace, mutated for the CI's mutation step (.ci/mutations): the
// stored trace context is dropped. Built only with the tag
// mutation_tracedropped.
func runTrace(ctx context.Context, e *corral.Execution) context.Context { return ctx }
