package headless_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/testutil"
)

// The fake agent binary is built once, on first use, for the package's
// tests. Fuzz workers run this binary too but never need it, so they never
// build it.
var (
	buildOnce  sync.Once
	buildDir   string
	buildPath  string
	buildError error
)

// buildFakeAgent returns the fake agent's path, building it on first use.
func buildFakeAgent() (string, error) {
	buildOnce.Do(func() {
		if buildDir, buildError = os.MkdirTemp("", "headless-test-"); buildError != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "fakeagent")
		out, err := exec.Command("go", "build", "-o", buildPath, "github.com/corralrun/corral/internal/fakeagent").CombinedOutput()
		if err != nil {
			buildError = fmt.Errorf("building the fake agent: %v\n%s", err, out)
		}
	})
	return buildPath, buildError
}

// fakeAgentPath is buildFakeAgent for a test. The fake agent's scenarios
// are judged by Linux's supervision tiers and /proc (survivors, zombies,
// descriptors): elsewhere the test is skipped, saying so.
func fakeAgentPath(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("SKIP: the fake agent's scenarios need Linux (its supervision tiers and /proc), not %s", runtime.GOOS)
	}
	p, err := buildFakeAgent()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if buildDir != "" {
			os.RemoveAll(buildDir)
		}
		os.Exit(code)
	}))
}

// agent returns a spec that runs the fake agent's scenario with flags, its
// processes tagged; the test fails if any of them survives the test.
func agent(t *testing.T, scenario string, flags ...string) *headless.Spec {
	t.Helper()
	path := fakeAgentPath(t)
	tag := testutil.Tag(t)
	testutil.CheckFDs(t)
	t.Cleanup(func() {
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		testutil.AssertNoZombies(t, 5*time.Second)
	})
	args := append([]string{path}, flags...)
	args = append(args, scenario)
	return &headless.Spec{
		Args:  args,
		Env:   []string{testutil.TagEnvVar(tag)},
		Grace: 500 * time.Millisecond,
	}
}
