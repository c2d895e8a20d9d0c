package headless

import (
	"bytes"
	"strings"
)

// redactor hides secrets in text written to transcripts and stderr tails:
// the values of secret-looking variables given to the agent, and tokens
// with the prefixes that API keys are known by. It matches literals only
// (no regular expressions), so it costs a few vectorised scans per line.
type redactor struct {
	values   [][]byte // exact secrets
	prefixes [][]byte // a token starting with one of these is a secret
}

const redacted = "[REDACTED]"

// tokenPrefixes are the prefixes of well-known credentials. A match counts
// only at a word start and with at least minToken token bytes after it.
var tokenPrefixes = []string{
	"sk-ant-", "sk-proj-", "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
	"github_pat_", "glpat-", "xoxb-", "xoxp-", "xapp-", "AKIA", "AIza",
	"Bearer ",
}

const minToken = 16

// newRedactor takes the "KEY=VALUE" entries of an environment; values of
// keys that look secret and are long enough to be unambiguous are hidden.
func newRedactor(env []string) *redactor {
	r := &redactor{}
	for _, p := range tokenPrefixes {
		r.prefixes = append(r.prefixes, []byte(p))
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < 8 {
			continue
		}
		u := strings.ToUpper(k)
		for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
			if strings.Contains(u, w) {
				r.values = append(r.values, []byte(v))
				break
			}
		}
	}
	return r
}

// redact returns b with secrets replaced; b itself when there are none.
func (r *redactor) redact(b []byte) []byte {
	out := b
	copied := false
	own := func() {
		if !copied {
			out = append([]byte(nil), out...)
			copied = true
		}
	}
	for _, v := range r.values {
		if bytes.Contains(out, v) {
			own()
			out = bytes.ReplaceAll(out, v, []byte(redacted))
		}
	}
	for _, p := range r.prefixes {
		from := 0
		for {
			i := bytes.Index(out[from:], p)
			if i < 0 {
				break
			}
			i += from
			end := i + len(p)
			for end < len(out) && isTokenByte(out[end]) {
				end++
			}
			if (i > 0 && isTokenByte(out[i-1]) && p[len(p)-1] != ' ') || end-i-len(p) < minToken {
				from = i + len(p)
				continue
			}
			own()
			keep := i + len(p)
			if p[len(p)-1] != ' ' {
				keep = i + min(len(p), 4)
			}
			out = append(out[:keep], append([]byte(redacted), out[end:]...)...)
			from = keep + len(redacted)
		}
	}
	return out
}

func (r *redactor) redactString(s string) string {
	b := r.redact([]byte(s))
	return string(b)
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
}
