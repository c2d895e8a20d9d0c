package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavy are packages whose start a command that does not use them must
// not pay (issue 27): the task service's storage and engine, the web UI's
// templates, the OpenTelemetry SDK and its wire formats (all in
// corral-serve and corral-otlp); the MCP SDK, its JSON Schema package,
// encoding/gob (which the SDK imports), the shell parser, corral's MCP
// server and shell tool, and the headless turn's stream parsing (all in
// corral-mcp). Each is a prefix of import paths: the package and those
// below it.
var heavy = []string{
	"database/sql", "modernc.org/", "github.com/jackc/", "github.com/riverqueue/",
	"html/template", "text/template",
	"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters", "google.golang.org/grpc", "google.golang.org/protobuf",
	"github.com/corralrun/corral/store", "github.com/corralrun/corral/service", "github.com/corralrun/corral/web",
	"github.com/corralrun/corral/api",
	"github.com/modelcontextprotocol/", "github.com/google/jsonschema-go", "encoding/gob", "mvdan.cc/sh/",
	"github.com/corralrun/corral/mcpserver", "github.com/corralrun/corral/shell", "github.com/corralrun/corral/headless",
}

// clientHeavy are what corral's client commands (submit, ps, logs,
// cancel, agents, schedules) link, and corral must not: the service's Go
// client and the HTTP and TLS stack under it. They live in corral-client
// now, which corral executes in its place for those commands.
var clientHeavy = []string{
	"net/http", "crypto/tls", "crypto/x509", "github.com/corralrun/corral/client",
	// Nor any cryptography: webhook signing lives in package webhook,
	// which only the service links (on Windows, proc names its pipes with
	// a random nonce from crypto/rand; see cryptoOnWindows).
	"crypto/", "github.com/corralrun/corral/webhook",
}

// corralHeavy are what corral must not link for its own commands either:
// package regexp, whose tables (regexp/syntax and the unicode tables it
// names) were a third of the allocations of every corral start, for one
// /dev/fd/N path match (internal/secret matches it by hand).
var corralHeavy = []string{"regexp"}

// cryptoOnWindows reports whether the ban b is the one on all of the
// standard library's cryptography, which corral may break on Windows
// alone: proc's pipes there are named pipes with an unguessable name.
func cryptoOnWindows(goos, b string) bool {
	return goos == "windows" && b == "crypto/"
}

// helperHeavy are what a run's helper (init, holder, guardian) must not
// link beyond heavy: the network stack and TLS (the sandbox's proxy runs
// in corral, not in the helper), regular expressions, and corral's upper
// layers.
var helperHeavy = []string{
	"net/http", "crypto/tls", "crypto/x509", "regexp", "os/exec", "go.opentelemetry.io/",
	"github.com/corralrun/corral/proc", "github.com/corralrun/corral/headless",
	"github.com/corralrun/corral/client", "github.com/corralrun/corral/internal/egress",
}

// TestStartPathsLinkNothingHeavy: the programs a run starts link only what
// they use, read from the build graph (go list -deps), not from a clock.
// corral itself (every command, corral --version among them) links
// nothing of the task service, which lives in corral-serve, nor of the MCP
// server and the shell tool, which live in corral-mcp, nor the service's
// client and the HTTP stack, which live in corral-client; corral-shim,
// from which corral starts every run's init and guardian, links neither
// the service nor the network stack, the MCP SDK or the rest of corral.
func TestStartPathsLinkNothingHeavy(t *testing.T) {
	for _, c := range []struct {
		pkg    string
		banned []string
	}{
		{"github.com/corralrun/corral/cmd/corral", slices.Concat(heavy, clientHeavy, corralHeavy)},
		{"github.com/corralrun/corral/cmd/corral-shim", append(heavy[:len(heavy):len(heavy)], helperHeavy...)},
	} {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			cmd := exec.Command("go", "list", "-deps", c.pkg)
			cmd.Env = append(cmd.Environ(), "GOOS="+goos)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", c.pkg, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				for _, b := range c.banned {
					if under(dep, b) && !cryptoOnWindows(goos, b) {
						t.Errorf("%s (GOOS=%s) links %s: %s", c.pkg, goos, dep, why(t, goos, c.pkg, dep))
					}
				}
			}
		}
	}
}

// under reports whether the package dep is banned by b: b itself or a
// package below it; a b that ends in "/" bans every path it begins.
func under(dep, b string) bool {
	if strings.HasSuffix(b, "/") {
		return strings.HasPrefix(dep, b)
	}
	return dep == b || strings.HasPrefix(dep, b+"/")
}

// why names the packages of pkg's build that import dep directly.
func why(t *testing.T, goos, pkg, dep string) string {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, pkg)
	cmd.Env = append(cmd.Environ(), "GOOS="+goos)
	out, err := cmd.Output()
	if err != nil {
		return err.Error()
	}
	var by []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[min(1, len(f)):] {
			if imp == dep {
				by = append(by, f[0])
			}
		}
	}
	return "imported by " + strings.Join(by, ", ")
}
