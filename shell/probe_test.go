package shell

import (
	"context"
	"strings"
	"testing"
)

func TestEnvironmentReportsShellAndTools(t *testing.T) {
	tool, _ := newTool(t)
	tool.ProbeTools = []string{"bash", "no-such-tool-xyz", "bad;name"}
	s := newSession(t, tool)
	run(t, s, "cd /")
	e, err := s.Environment(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if e.ShellFamily != "bash" || !strings.HasPrefix(e.ShellVersion, "5.") && !strings.HasPrefix(e.ShellVersion, "4.") || e.Cwd != "/" || !e.Persistent {
		t.Errorf("got %+v", e)
	}
	if !strings.HasPrefix(e.Tools["bash"], "5.") && !strings.HasPrefix(e.Tools["bash"], "4.") {
		t.Errorf("bash version %q", e.Tools["bash"])
	}
	if e.Tools["no-such-tool-xyz"] != "not found" || !strings.HasPrefix(e.Tools["bad;name"], "not probed") {
		t.Errorf("tools %v", e.Tools)
	}
	if e.MaxOutputChars != DefaultMaxOutputChars || e.DefaultTimeoutMS != DefaultTimeout.Milliseconds() {
		t.Errorf("limits %+v", e)
	}
}
