package headless_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/testutil"
)

// fakeAgent is the path of the fake agent binary, built once for the
// package's tests.
var fakeAgent string

func TestMain(m *testing.M) {
	if runtime.GOOS != "linux" {
		// The scenarios need the Linux supervision tiers and /proc.
		fmt.Println("headless: integration tests need Linux; skipping")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "headless-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeAgent = filepath.Join(dir, "fakeagent")
	out, err := exec.Command("go", "build", "-o", fakeAgent, "github.com/corralrun/corral/internal/fakeagent").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the fake agent: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// agent returns a spec that runs the fake agent's scenario with flags, its
// processes tagged; the test fails if any of them survives the test.
func agent(t *testing.T, scenario string, flags ...string) *headless.Spec {
	t.Helper()
	tag := testutil.Tag(t)
	testutil.CheckFDs(t)
	t.Cleanup(func() {
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		testutil.AssertNoZombies(t, 5*time.Second)
	})
	args := append([]string{fakeAgent}, flags...)
	args = append(args, scenario)
	return &headless.Spec{
		Args:  args,
		Env:   []string{testutil.TagEnvVar(tag)},
		Grace: 500 * time.Millisecond,
	}
}
