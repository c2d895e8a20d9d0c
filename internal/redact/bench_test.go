package redact

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
)

// The peer: what corral did before this package, and what most log
// redactors do, a list of regular expressions applied to each line (the
// service's former rule set). It sees neither a key's body nor a secret
// split across lines, and is measured here on the same input.
var peerRules = []*regexp.Regexp{
	regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{8,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{20,}`),
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`),
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),
	regexp.MustCompile(`(?i)((?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth(?:orization)?)["']?\s*[:=]\s*["']?(?:bearer\s+)?)([^\s"',;]{6,})`),
	regexp.MustCompile(`(?i)(bearer\s+)([A-Za-z0-9._~+/=\-]{12,})`),
}

func peerLine(line []byte, values [][]byte) []byte {
	for _, v := range values {
		if bytes.Contains(line, v) {
			line = bytes.ReplaceAll(line, v, []byte(Mask))
		}
	}
	for _, p := range peerRules {
		if p.Match(line) {
			line = p.ReplaceAll(line, []byte(Mask))
		}
	}
	return line
}

var benchInputs = map[string]string{
	// An agent's stream-json turn: JSON lines full of ':'.
	"agent-stream": strings.Repeat(claudeLines, 500),
	// A build's output: words, paths, a few '=' and ':'.
	"shell-output": strings.Repeat("ok  \tgithub.com/example/pkg/sub\t0.412s\tcoverage: 81.2% of statements\nCC=gcc GOOS=linux go build -o bin/app ./cmd/app\n", 2000),
	// Output dense with secrets.
	"secrets": strings.Repeat(allCases(), 50),
}

func BenchmarkRedact(b *testing.B) {
	r := New("hunter2hunter2", "service-token-123456", "agent-secret-value-42")
	for _, name := range []string{"agent-stream", "shell-output", "secrets"} {
		in := []byte(benchInputs[name])
		b.Run(name+"/corral-stream", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				w := r.Writer(io.Discard)
				for rest := in; len(rest) > 0; {
					k := min(len(rest), 4096)
					w.Write(rest[:k])
					rest = rest[k:]
				}
				w.Close()
			}
		})
		b.Run(name+"/corral-lines", func(b *testing.B) {
			lines := bytes.Split(in, []byte("\n"))
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				l := r.Lines(func([]byte) {})
				for _, line := range lines {
					l.Line(line)
				}
				l.Close()
			}
		})
		b.Run(name+"/peer-regexp-lines", func(b *testing.B) {
			lines := bytes.Split(in, []byte("\n"))
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				for _, line := range lines {
					peerLine(line, r.values)
				}
			}
		})
	}
}
