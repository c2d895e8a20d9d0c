package egress

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEgressLinksNoHTTPStack: the package links neither net/http nor what
// comes with it (TLS, X.509, MIME, the HTTP/2 stack): every program that
// imports proc, the corral CLI included, pays at each start for what the
// proxy links.
func TestEgressLinksNoHTTPStack(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: cannot list the package's dependencies (%v)", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, dep := range deps {
		for _, banned := range []string{"net/http", "crypto/tls", "crypto/x509", "mime", "golang.org/x/net/http"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") || strings.Contains(dep, "/"+banned+"/") {
				t.Errorf("internal/egress links %s", dep)
			}
		}
	}
	t.Logf("%d packages linked", len(deps))
}
