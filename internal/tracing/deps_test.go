package tracing

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryLinksNoOTelGlobalOrPropagation: the packages that trace, and
// the corral CLI's flags that install its provider, link the OpenTelemetry
// API packages only: not go.opentelemetry.io/otel (the global provider)
// nor its propagation package, which import net/http, read from the build
// graph.
func TestLibraryLinksNoOTelGlobalOrPropagation(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("SKIP: go is not on PATH, so the build graph cannot be read: %v", err)
	}
	const module = "github.com/corralrun/corral/"
	pkgs := []string{"proc", "shell", "headless", "capture", "internal/tracing", "internal/cliflag", "cmd/corral"}
	args := []string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := map[string]bool{"go.opentelemetry.io/otel": true, "go.opentelemetry.io/otel/propagation": true}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[min(1, len(f)):] {
			if banned[imp] {
				t.Errorf("%s imports %s, so one of %s links it", f[0], imp, strings.Join(pkgs, ", "))
			}
		}
	}
}
