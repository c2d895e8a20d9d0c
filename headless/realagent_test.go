package headless_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/testutil"
)

// TestRealAgentTurn runs one short turn of a real Claude Code or Codex
// binary, when CORRAL_TEST_REAL_AGENT=1 and the binary is on PATH. It
// spends a few cents. A machine without credentials must end the turn as
// an auth failure, promptly, rather than hang.
func TestRealAgentTurn(t *testing.T) {
	if os.Getenv("CORRAL_TEST_REAL_AGENT") != "1" {
		t.Skip("SKIP: set CORRAL_TEST_REAL_AGENT=1 to run a real claude or codex turn (it needs the CLI logged in, and spends tokens)")
	}
	for _, c := range []struct {
		bin  string
		args []string
	}{
		{"claude", []string{"-p", "--output-format", "stream-json", "--verbose", "--max-turns", "2", "Reply with the single word pong."}},
		{"codex", []string{"exec", "--json", "--skip-git-repo-check", "Reply with the single word pong."}},
	} {
		t.Run(c.bin, func(t *testing.T) {
			path, err := exec.LookPath(c.bin)
			if err != nil {
				t.Skipf("SKIP: %s is not on PATH", c.bin)
			}
			tag := testutil.Tag(t)
			turn, err := headless.Start(context.Background(), &headless.Spec{
				Args:        append([]string{path}, c.args...),
				Env:         []string{testutil.TagEnvVar(tag)},
				Timeout:     3 * time.Minute,
				IdleTimeout: 2 * time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := turn.Wait()
			full, _ := turn.Close()
			testutil.AssertNoTagged(t, tag, 10*time.Second)
			t.Logf("%s: %s %q by %s in %v: %q (session %s, $%.4f) %s", c.bin, r.Status, r.ErrorType, r.FinalizedBy, r.Duration, r.Text, r.SessionID, costOf(r), r.Reason)
			switch {
			case r.Status == corral.StatusSucceeded:
				if r.SessionID == "" || r.Text == "" {
					t.Errorf("success without salvage: %+v", r)
				}
			case r.ErrorType == corral.ErrorAuth:
				// No credentials here: the point is that it ended at once.
			default:
				t.Errorf("real turn: %s %s: %s\nstderr: %s", r.Status, r.ErrorType, r.Reason, full.StderrTail)
			}
		})
	}
}
