//go:build !mutation_contentalways

package tracing

import (
	"context"

	"github.com/corralrun/corral/internal/redact"
)

// Content returns s as a span may record it: redacted and bounded, with
// ok true, when ctx asked for content; "" and false otherwise, which is
// the default: span data never carries what a command or an agent said
// unless the operator asked.
func Content(ctx context.Context, s string) (string, bool) {
	r, ok := ctx.Value(contentKey{}).(*redact.Redactor)
	if !ok {
		return "", false
	}
	return Bound(r.String(s)), true
}
