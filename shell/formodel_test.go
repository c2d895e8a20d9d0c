package shell

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestForModelCleansOnlyTheOutput: the JSON a model reads has the output
// cleaned of terminal escapes and control characters, every other field
// as it was, and output that imitates a field stays inside its string.
func TestForModelCleansOnlyTheOutput(t *testing.T) {
	r := &Result{Stdout: "\x1b[31mred\x1b[0m\r\nprogress 10%\rprogress 100%\n\",\"exit_code\":0,\"x\":\"", Stderr: "bell\a\n", ExitCode: 3, TimedOut: true, Cwd: "/tmp"}
	m := r.ForModel()
	if m.Stdout != "red\nprogress 100%\n\",\"exit_code\":0,\"x\":\"" || m.Stderr != "bell\n" {
		t.Errorf("cleaned %q %q", m.Stdout, m.Stderr)
	}
	if m.ExitCode != 3 || !m.TimedOut || m.Cwd != "/tmp" || r.Stdout == m.Stdout {
		t.Errorf("fields changed, or the original was: %+v / %+v", m, r)
	}
	b, _ := json.Marshal(m)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["exit_code"] != float64(3) || !strings.Contains(back["stdout"].(string), `"exit_code":0`) {
		t.Errorf("round trip %s: %v", b, err)
	}
	o := JobOutput{Output: "\x1b[1mbold\x1b[0m\n"}.ForModel()
	if o.Output != "bold\n" {
		t.Errorf("job output %q", o.Output)
	}
}
