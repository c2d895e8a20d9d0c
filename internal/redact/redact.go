// Package redact hides secrets in text before corral logs or stores it: the
// shell tool's audit records, headless transcripts and results, and the
// service's logs and execution records all pass through it.
//
// A Redactor works on whole streams, not lines. It hides:
//
//   - literal values the caller registers (New), such as the service's API
//     token and the values of environment variables whose names look
//     secret (EnvValues, SecretName), wherever they occur;
//   - private keys in PEM form, every "-----BEGIN ... PRIVATE KEY-----"
//     through its END line, body included, whatever the line breaks (real
//     ones, or "\n" escapes inside a JSON string);
//   - tokens with a known shape: AWS access key ids (AKIA..., ASIA...) and
//     a 40-character secret key next to one, GCP API keys (AIza...) and
//     OAuth secrets, Azure client secrets, GitHub tokens (ghp_, gho_, ghu_,
//     ghs_, ghr_, github_pat_), GitLab, Slack, Stripe, Hugging Face and npm
//     tokens, Anthropic (sk-ant-...) and OpenAI (sk-..., sk-proj-...) keys,
//     JSON web tokens;
//   - values given to secret-looking names: NAME=value, "name": "value",
//     --name value, name: value where the colon has an assignment's shape
//     (the name begins a line, a YAML list item, a diff or curl -v line or
//     a quoted string, and the value is quoted or the one word left on the
//     line), Authorization and Cookie headers, bearer tokens, Azure
//     connection strings (AccountKey=...;), passwords in URLs.
//
// Prose is left alone: a colon after a secret-looking word inside a line
// is punctuation ("cat: /data/token: No such file or directory"), and a
// bare value that only names or computes one is not a secret: a reference
// ($TOKEN, $(cat token)), a call or an index (get_token(), os.environ[...]),
// a keyword (null, None, true).
//
// Each hidden value becomes Mask; neighbouring hidden values become one
// Mask. Text in JSON stays valid JSON: a masked string value is still a
// string, and escapes are never cut.
//
// Redacting a stream through a Writer gives exactly the bytes that
// redacting the whole text at once gives, however the stream is split into
// writes: the Writer withholds only what it cannot decide yet (at most a
// few hundred bytes beyond the longest registered value), and a newline
// decides everything before it (unless a registered value holds one), so
// line-by-line output is never a line late, except inside a private key.
package redact

import (
	"sort"
	"strings"
)

// Mask replaces each hidden value.
const Mask = "[REDACTED]"

// MinValueLen is the length of the shortest value New registers: shorter
// values ("1", "true", "dev") would mask ordinary words.
const MinValueLen = 6

// Redactor holds the rules of redaction. It is immutable and safe for
// concurrent use. The zero value and nil hide the shapes only.
type Redactor struct {
	values  [][]byte // registered literals, longest first
	maxLen  int      // longest registered literal
	newline bool     // some literal holds a newline
}

// New returns a Redactor that, besides the shapes, hides every occurrence
// of each of values. Values shorter than MinValueLen are ignored.
func New(values ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, v := range values {
		if len(v) < MinValueLen || seen[v] {
			continue
		}
		seen[v] = true
		r.values = append(r.values, []byte(v))
		r.maxLen = max(r.maxLen, len(v))
		r.newline = r.newline || strings.Contains(v, "\n")
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// EnvValues returns the values of the "NAME=VALUE" entries of env whose
// names look secret (SecretName), and the passwords of URLs with
// credentials (scheme://user:password@host) in any entry, for New.
func EnvValues(env []string) []string {
	ensureTables()
	var out []string
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if SecretName(name) {
			out = append(out, v)
		}
		if pw := urlPassword(v); pw != "" {
			out = append(out, pw)
		}
	}
	return out
}

// urlPassword returns the password of the first URL with credentials in s.
func urlPassword(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return ""
	}
	rest := s[i+3:]
	at := strings.IndexAny(rest, "@/?# ")
	if at < 0 || rest[at] != '@' {
		return ""
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	if !ok {
		return ""
	}
	return pw
}

// Bytes returns b with every secret it recognizes replaced by Mask. When
// there is none, it returns b itself; b is never changed.
func (r *Redactor) Bytes(b []byte) []byte {
	w := r.oneShot(b)
	if !w.found {
		return b
	}
	return w.emitTo(make([]byte, 0, len(b)), w.n)
}

// String is Bytes for strings.
func (r *Redactor) String(s string) string {
	b := []byte(s)
	w := r.oneShot(b)
	if !w.found {
		return s
	}
	return string(w.emitTo(b[:0:0], w.n))
}

// oneShot scans all of b as a whole stream. b is only read: a one-shot
// pass never compacts.
func (r *Redactor) oneShot(b []byte) *Writer {
	ensureTables()
	w := &Writer{r: r}
	w.reset()
	w.buf = b
	w.n = int64(len(b))
	w.scan(true)
	return w
}
