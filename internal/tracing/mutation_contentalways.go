//go:build mutation_contentalways

// Mutant: Spans record commands, prompts and outputs though nobody asked (still redacted).
// Guarantee: 5. secrets are never logged (span data holds no content unless asked)
// Caught: ./shell TestSessionCommandIsASpanAboveItsRun
// Caught: ./headless TestTracedTurnIsASpanTree

package tracing

import (
	"context"

	"github.com/corralrun/corral/internal/redact"
)

// Content, mutated for the CI's mutation step (.ci/mutations): content is
// recorded whatever ctx says. Built only with the tag
// mutation_contentalways.
func Content(ctx context.Context, s string) (string, bool) {
	r, ok := ctx.Value(contentKey{}).(*redact.Redactor)
	if !ok {
		r = &redact.Redactor{}
	}
	return Bound(r.String(s)), true
}
