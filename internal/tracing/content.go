package tracing

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/corralrun/corral/internal/redact"
)

// MaxContent bounds each piece of content a span records: the head of a
// longer text is kept, marked as cut.
const MaxContent = 4 << 10

type contentKey struct{}

// WithContent returns ctx under which spans record content (commands,
// prompts, outputs, tool inputs), each piece passed through r first and
// bounded by MaxContent. A nil r redacts the shapes of secrets only (see
// redact.Redactor).
func WithContent(ctx context.Context, r *redact.Redactor) context.Context {
	if r == nil {
		r = &redact.Redactor{}
	}
	return context.WithValue(ctx, contentKey{}, r)
}

// Recording reports whether ctx asked for content.
func Recording(ctx context.Context) bool {
	_, ok := ctx.Value(contentKey{}).(*redact.Redactor)
	return ok
}

// Bound cuts s to MaxContent bytes on a rune boundary, marking the cut.
func Bound(s string) string {
	if len(s) <= MaxContent {
		return s
	}
	cut := MaxContent
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	var b strings.Builder
	b.WriteString(s[:cut])
	b.WriteString("…[cut]")
	return b.String()
}

// CopyContent returns to with from's content setting, if from has one: a
// request's context takes the server's.
func CopyContent(to, from context.Context) context.Context {
	if r, ok := from.Value(contentKey{}).(*redact.Redactor); ok {
		return context.WithValue(to, contentKey{}, r)
	}
	return to
}
