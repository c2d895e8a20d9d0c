package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientLinksNoSupervisionCore proves the client is light: a program
// that talks to the service imports the domain vocabulary (the root
// package) and the standard library, nothing of the supervision core
// (proc, the shim whose init hook would run in every such program,
// cgroups, the sandbox) or of the service's storage.
func TestClientLinksNoSupervisionCore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Skipf("SKIP: go list is not available here: %v\n%s", err, out)
	}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		deps = append(deps, p)
	}
	allowed := map[string]bool{"github.com/corralrun/corral": true, "github.com/corralrun/corral/client": true}
	for _, p := range deps {
		if !allowed[p] {
			t.Errorf("the client links %s: it may import only the domain (the root package) and the standard library", p)
		}
	}
	if len(deps) != len(allowed) {
		t.Errorf("non-standard dependencies %v, want exactly %d", deps, len(allowed))
	}
}
