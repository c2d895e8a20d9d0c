//go:build !mutation_prose

package redact

// colonValue masks the value of name: value, where b[j:] is a
// secret-looking name without quotes and v follows its colon. In prose a
// colon after such a word is punctuation ("cat: /data/token: No such file
// or directory", "error: token: expired"), so a colon assigns only where
// it has an assignment's shape: the name begins a line, a YAML list item,
// a line of curl -v (> or <) or a quoted string (-H 'X-Api-Key: ...'),
// and the value is quoted, or one word that ends that line or string, or
// a header's (Authorization, Cookie), which runs to the end of the line.
// An Authorization header inside a line counts when an authentication
// scheme and a credential follow (Basic dXNlcjpwYXNz).
func colonValue(b []byte, j, v int, eof, header bool) match {
	ctx, ok := startsLine(b, j)
	switch {
	case !ok && header:
		return schemed(b, v, eof)
	case !ok:
		return match{}
	case header:
		return value(b, v, eof, false, true)
	}
	return lineValue(b, v, eof, ctx)
}
