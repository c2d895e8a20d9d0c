// Package redact hides secrets in text that is about to be logged: the
// values of secret-looking environment variables wherever they appear,
// credentials in URLs, values given to secret-looking names or options, and
// tokens with well-known shapes (bearer tokens, GitHub, Slack, AWS and
// OpenAI/Anthropic-style keys, JWTs).
package redact

import (
	"regexp"
	"sort"
	"strings"
)

// Mask replaces a hidden value.
const Mask = "[REDACTED]"

// minSecret is the shortest environment value treated as a secret: shorter
// values ("1", "true") would mask ordinary words.
const minSecret = 6

var secretName = regexp.MustCompile(`(?i)(token|secret|passw|pwd|api_?key|access_?key|private_?key|credential|auth|session|cookie|signature|_key$|^key$)`)

// IsSecretName reports whether an environment variable's name suggests its
// value is a secret.
func IsSecretName(name string) bool { return secretName.MatchString(name) }

var patterns = []struct {
	re   *regexp.Regexp
	repl string
}{
	// scheme://user:password@host
	{regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'"]*:)[^\s@/'"]+@`), "${1}" + Mask + "@"},
	// Authorization: Bearer xxx / Basic xxx / token xxx
	{regexp.MustCompile(`(?i)((?:authorization|proxy-authorization)\s*[:=]\s*(?:bearer|basic|token|bot)?\s*)[^\s'"]+`), "${1}" + Mask},
	{regexp.MustCompile(`(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}" + Mask},
	// NAME=value and --name=value / --name value for secret-looking names
	{regexp.MustCompile(`(?i)(\b[A-Za-z0-9_]*(?:token|secret|passw(?:or)?d?|pwd|api_?key|access_?key|private_?key|credentials?)[A-Za-z0-9_]*\s*=\s*)('[^']*'|"[^"]*"|[^\s'"]+)`), "${1}" + Mask},
	{regexp.MustCompile(`(?i)(--?(?:[a-z0-9-]*)(?:token|secret|password|passwd|api-?key|access-?key)(?:[a-z0-9-]*)[ =])('[^']*'|"[^"]*"|[^\s'"-][^\s'"]*)`), "${1}" + Mask},
	// Well-known token shapes.
	{regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), Mask},
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), Mask},
	{regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), Mask},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`), Mask},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), Mask},
	{regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)`), Mask},
}

// Redactor hides secrets. The zero value hides pattern-shaped secrets
// only; NewRedactor adds the values of secret-looking variables of an
// environment.
type Redactor struct {
	values []string // longest first
}

// New returns a Redactor that also hides the values of the secret-looking
// variables in env ("KEY=VALUE" entries).
func New(env []string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < minSecret || !IsSecretName(k) || seen[v] {
			continue
		}
		seen[v] = true
		r.values = append(r.values, v)
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// String returns s with every secret it recognizes replaced by Mask.
func (r *Redactor) String(s string) string {
	if r != nil {
		for _, v := range r.values {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Mask)
			}
		}
	}
	for _, p := range patterns {
		s = p.re.ReplaceAllString(s, p.repl)
	}
	return s
}
