// Package redact removes secrets from text before it is stored: known
// secret values (an agent's secret-looking environment variables, the
// service's API token) and the shapes of common credentials.
package redact

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every secret.
const Mask = "[REDACTED]"

var patterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`),
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
}

// keyed matches "password=...", "api_key: ...", "Authorization: Bearer ...".
var keyed = regexp.MustCompile(`(?i)((?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth(?:orization)?)["']?\s*[:=]\s*["']?(?:bearer\s+)?)([^\s"',;]{6,})`)

var bearer = regexp.MustCompile(`(?i)(bearer\s+)([A-Za-z0-9._~+/=\-]{12,})`)

// Redactor replaces secrets in text. The zero value knows only the shapes.
type Redactor struct {
	values []string // longest first
}

// New returns a Redactor that also hides each of values (values shorter
// than 6 bytes are ignored: masking them would garble ordinary text).
func New(values ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, v := range values {
		if len(v) >= 6 && !seen[v] {
			seen[v] = true
			r.values = append(r.values, v)
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// SecretEnv returns the values of env entries whose names look secret
// (TOKEN, KEY, SECRET, PASSWORD, CREDENTIAL, AUTH).
func SecretEnv(env map[string]string) []string {
	var out []string
	for k, v := range env {
		u := strings.ToUpper(k)
		for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"} {
			if strings.Contains(u, w) {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// Bytes returns b with secrets masked; b itself is not changed. When
// nothing matches, b is returned as is.
func (r *Redactor) Bytes(b []byte) []byte {
	out := b
	if r != nil {
		for _, v := range r.values {
			if bytes.Contains(out, []byte(v)) {
				out = bytes.ReplaceAll(out, []byte(v), []byte(Mask))
			}
		}
	}
	for _, p := range patterns {
		if p.Match(out) {
			out = p.ReplaceAll(out, []byte(Mask))
		}
	}
	if keyed.Match(out) {
		out = keyed.ReplaceAll(out, []byte("${1}"+Mask))
	}
	if bearer.Match(out) {
		out = bearer.ReplaceAll(out, []byte("${1}"+Mask))
	}
	return out
}

// String is Bytes for strings.
func (r *Redactor) String(s string) string {
	return string(r.Bytes([]byte(s)))
}
