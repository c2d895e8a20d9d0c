package shell

import (
	"context"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// newTool returns a Tool whose processes carry a fresh tag, and proves at
// the end that none of them is left and no descriptor leaked.
func newTool(t *testing.T) (*Tool, string) {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	tool := &Tool{Env: []string{testutil.TagEnvVar(tag)}, Dir: t.TempDir(), SpillDir: t.TempDir()}
	t.Cleanup(func() {
		tool.Close()
		testutil.AssertNoTagged(t, tag, 5*time.Second)
		testutil.AssertNoZombies(t, 5*time.Second)
	})
	return tool, tag
}

func newSession(t *testing.T, tool *Tool) *Session {
	t.Helper()
	s, err := tool.NewSession(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, s interface {
	Run(context.Context, Request) (*Result, error)
}, cmd string) *Result {
	t.Helper()
	res, err := s.Run(context.Background(), Request{Command: cmd})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return res
}
