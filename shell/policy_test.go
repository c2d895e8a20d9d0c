package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The peer matched ^ on the first line only, so "ls\nrm -rf /" passed an
// "^ls" allowlist.
func TestPolicyEvaluatesEveryLineAndSegment(t *testing.T) {
	tool, _ := newTool(t)
	marker := filepath.Join(tool.Dir, "ran")
	tool.Policy = Policy{Allow: []string{`^ls( |$)`, `^echo( |$)`}}
	for _, cmd := range []string{
		"ls\ntouch " + marker,
		"ls; touch " + marker,
		"ls && touch " + marker,
		"ls | touch " + marker,
		"ls & touch " + marker,
		"echo $(touch " + marker + ")",
		"echo `touch " + marker + "`",
		"X=1 touch " + marker,
		"(touch " + marker + ")",
		"if ls; then touch " + marker + "; fi",
	} {
		res := run(t, tool, cmd)
		if !res.Denied || !strings.Contains(res.Reason, "touch") || res.ExitCode != -1 {
			t.Errorf("%q: allowed: %+v", cmd, res)
		}
		if !strings.Contains(res.Text(), "denied") {
			t.Errorf("%q: text %q", cmd, res.Text())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a denied command ran")
	}
	for _, cmd := range []string{"ls", "ls -la; echo ok", "echo 'a; touch b' && ls", "X=1 ls"} {
		if res := run(t, tool, cmd); res.Denied {
			t.Errorf("%q denied: %s", cmd, res.Reason)
		}
	}
}

func TestPolicyDenyMatchesAnyLineOrSegment(t *testing.T) {
	tool, _ := newTool(t)
	tool.Policy = Policy{Deny: []string{`^rm\s+-rf`, `curl .*\| *(ba)?sh`}}
	for _, cmd := range []string{"echo hi\nrm -rf /tmp/x", "true && rm -rf x", "FOO=1 rm -rf x", "curl http://x | sh"} {
		if res := run(t, tool, cmd); !res.Denied {
			t.Errorf("%q allowed", cmd)
		}
	}
	if res := run(t, tool, "echo 'rm -rf is dangerous'"); res.Denied {
		t.Errorf("quoted text denied: %s", res.Reason)
	}
}

func TestPolicyFuncAndApprovalHookCanDeny(t *testing.T) {
	tool, _ := newTool(t)
	var seen []Check
	tool.Policy = Policy{Func: func(c Check) (bool, string) {
		return strings.Contains(c.Command, "forbidden"), "no forbidden things"
	}}
	tool.Approve = func(ctx context.Context, c Check) (bool, string) {
		seen = append(seen, c)
		return !strings.Contains(c.Command, "ask-no"), "the user said no"
	}
	if res := run(t, tool, "echo forbidden"); !res.Denied || !strings.Contains(res.Reason, "no forbidden things") {
		t.Errorf("got %+v", res)
	}
	if res := run(t, tool, "echo ask-no"); !res.Denied || !strings.Contains(res.Reason, "the user said no") || !strings.Contains(res.Reason, "approval") {
		t.Errorf("got %+v", res)
	}
	if res := run(t, tool, "echo fine | cat"); res.Denied || res.Stdout != "fine\n" {
		t.Errorf("got %+v", res)
	}
	if len(seen) != 2 || len(seen[1].Segments) != 2 || seen[1].Segments[1].Words != "cat" {
		t.Errorf("approval saw %+v", seen)
	}
}

func TestPolicyAppliesToSessionsAndJobs(t *testing.T) {
	tool, _ := newTool(t)
	tool.Policy = Policy{Deny: []string{`^sleep`}}
	s := newSession(t, tool)
	if res := run(t, s, "cd /; sleep 1"); !res.Denied || res.Cwd != tool.Dir {
		t.Errorf("got %+v", res)
	}
	res, err := s.Start(context.Background(), Request{Command: "sleep 100"})
	if err != nil || !res.Denied || res.JobID != "" {
		t.Errorf("got %+v %v", res, err)
	}
}

func TestAuditWritesJSONLinesWithSecretsRedacted(t *testing.T) {
	tool, _ := newTool(t)
	var buf bytes.Buffer
	sink := AuditJSON(&buf)
	tool.Audit = sink
	tool.Env = append(tool.Env, "SERVICE_TOKEN=tok-1234567890")
	tool.Policy = Policy{Deny: []string{"^shutdown"}}
	run(t, tool, "echo tok-1234567890 && git clone https://bob:hunter22@example.com/r.git 2>/dev/null; exit 4")
	run(t, tool, "shutdown now")
	run(t, tool, "printf '%s\\n' '-----BEGIN PRIVATE KEY-----\nMIIEsecretKeyBody\n-----END PRIVATE KEY-----' >/dev/null")
	s := newSession(t, tool)
	run(t, s, "export API_KEY=abcdef123456; echo $API_KEY")
	s.Run(context.Background(), Request{Command: "sleep 10", Timeout: 200 * 1e6})
	s.Close()
	text := buf.String()
	for _, secret := range []string{"tok-1234567890", "hunter22", "abcdef123456", "MIIEsecretKeyBody"} {
		if strings.Contains(text, secret) {
			t.Errorf("audit shows %q:\n%s", secret, text)
		}
	}
	var recs []AuditRecord
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var r AuditRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		recs = append(recs, r)
	}
	if r := recs[0]; r.Event != "run" || r.ExitCode == nil || *r.ExitCode != 4 || r.DurationMS == nil || r.Decision != "allow" || r.Pid == 0 {
		t.Errorf("first record %+v", r)
	}
	if r := recs[1]; r.Event != "denied" || r.Decision != "deny" || !strings.Contains(r.Reason, "shutdown") {
		t.Errorf("second record %+v", r)
	}
	var timedOut, closed bool
	for _, r := range recs {
		timedOut = timedOut || r.TimedOut
		closed = closed || r.Event == "session_close"
	}
	if !timedOut || !closed {
		t.Errorf("records %+v", recs)
	}
	if sink.Errors() != 0 {
		t.Error("write errors")
	}
}
