package executor

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/corralrun/corral"
)

func TestResumeArgsContinueTheSessionWithThePrompt(t *testing.T) {
	for _, tc := range []struct {
		template []string
		cli      string
		want     []string
	}{
		{[]string{"claude", "-p", "--output-format", "stream-json", "--", "{{prompt}}"}, "claude",
			[]string{"claude", "--resume", "S", "-p", "--output-format", "stream-json", "--", "Go on."}},
		{[]string{"/usr/bin/node", "/opt/claude-code/cli.js", "-p", "--", "{{prompt}}"}, "claude",
			[]string{"/usr/bin/node", "/opt/claude-code/cli.js", "--resume", "S", "-p", "--", "Go on."}},
		{[]string{"codex", "exec", "--json", "-c", "x=y", "--", "{{prompt}}"}, "codex",
			[]string{"codex", "exec", "--json", "-c", "x=y", "resume", "S", "--", "Go on."}},
		{[]string{"codex", "exec", "--json"}, "codex",
			[]string{"codex", "exec", "--json", "resume", "S", "--", "Go on."}},
	} {
		if agentCLI(tc.template) != tc.cli {
			t.Errorf("%q is not %s", tc.template, tc.cli)
		}
		got, err := resumeArgs(tc.template, tc.cli, "S", "Go on.")
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %q (%v), want %q", tc.template, got, err, tc.want)
		}
	}
	if agentCLI([]string{"bash", "-c", "x"}) != "" {
		t.Error("bash taken for an agent CLI")
	}
	if got := claudeProject("/home/dev/my.repo_x"); got != "-home-dev-my-repo-x" {
		t.Errorf("claude project of a path: %q", got)
	}
}

func TestRestoreWritesTheSessionWhereTheCLILooksAndStaysInIt(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(`{"line":1}` + "\n"))
	zw.Close()
	st := &corral.SessionState{SessionID: "S", CLI: "claude", Path: "projects/-old/S.jsonl", Data: z.Bytes()}
	if err := restore(st, dir, "/new/cwd", nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "projects", "-new-cwd", "S.jsonl")); err != nil || string(b) != `{"line":1}`+"\n" {
		t.Fatalf("restored %q (%v)", b, err)
	}
	if sessionFile("claude", dir, "S") == "" {
		t.Fatal("the restored file is not found as the session's")
	}
	evil := &corral.SessionState{SessionID: "T", CLI: "codex", Path: "../../etc/x.jsonl", Data: z.Bytes()}
	if err := restore(evil, dir, "/", nil); err == nil {
		t.Fatal("a state whose path leaves the CLI's directory was restored")
	}
}

func TestSessionTotalsAddThisAttemptToTheSessionBefore(t *testing.T) {
	o := &corral.Outcome{CostUSD: 0.2, Usage: json.RawMessage(`{"input_tokens":130,"output_tokens":40,"model":"m"}`)}
	cost, usage := sessionTotals(o, &corral.SessionState{CostUSD: 0.1, Usage: json.RawMessage(`{"input_tokens":130,"output_tokens":50}`)})
	var u map[string]any
	json.Unmarshal(usage, &u)
	if cost < 0.299 || cost > 0.301 || u["input_tokens"] != 260.0 || u["output_tokens"] != 90.0 || u["model"] != "m" {
		t.Errorf("session totals $%v %v", cost, u)
	}
}
