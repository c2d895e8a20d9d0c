package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/testutil"
)

func TestClientCommandsDriveTheServiceWithTextAndJSON(t *testing.T) {
	tag := testutil.Tag(t)
	s := startServe(t, t.TempDir(), tag)
	must := func(wantCode int, args ...string) (string, string) {
		t.Helper()
		out, errOut, code := s.cli(args...)
		if code != wantCode {
			t.Fatalf("corral %v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, out, errOut)
		}
		return out, errOut
	}
	must(0, "agents", "create", "sh", "--kind", "shell", "--max-parallel", "1", "--env", "GREETING=hello")
	must(0, "agents", "create", "bot", "--kind", "headless", "--", "sh", "-c", `echo '{"type":"result","subtype":"success","result":"answer to '"$1"'","session_id":"s1","num_turns":2,"total_cost_usd":0.5}'`, "agent", "{{prompt}}")
	out, _ := must(0, "agents", "--json")
	var agents []client.Agent
	if err := json.Unmarshal([]byte(out), &agents); err != nil || len(agents) != 2 || strings.Join(agents[1].EnvNames, ",") != "GREETING" || strings.Contains(out, "hello") {
		t.Fatalf("agents --json: %v %s", err, out)
	}
	out, _ = must(0, "agents")
	if !strings.Contains(out, "bot") || !strings.Contains(out, "headless") {
		t.Fatalf("agents list: %s", out)
	}
	must(0, "agents", "update", "sh", "--max-parallel", "2", "--timeout", "1m", "--labels", "gpu, eu")
	out, _ = must(0, "agents", "get", "sh")
	var a client.Agent
	json.Unmarshal([]byte(out), &a)
	if a.MaxParallelTasks != 2 || a.Timeout.D() != time.Minute || strings.Join(a.Labels, ",") != "eu,gpu" {
		t.Fatalf("update not applied: %+v", a)
	}
	// This service serves no labels: clear them so the agent's tasks run here.
	must(0, "agents", "update", "sh", "--labels", "")

	out, errOut := must(0, "submit", "sh", `echo "$GREETING world"`, "--wait")
	if out != "hello world\n" || !strings.Contains(errOut, "succeeded") {
		t.Fatalf("submit --wait: %q %q", out, errOut)
	}
	out, _ = must(0, "submit", "bot", "life", "--wait", "--json")
	var e client.Execution
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Result != "answer to life" || e.SessionID != "s1" || e.NumTurns != 2 || e.CostUSD != 0.5 || e.FinalizedBy != "result" {
		t.Fatalf("headless submit: %v %+v", err, e)
	}
	_, errOut = must(1, "submit", "sh", "echo bad >&2; exit 3", "--wait")
	if !strings.Contains(errOut, "failed (exit)") || !strings.Contains(errOut, "bad") {
		t.Fatalf("failing submit: %q", errOut)
	}
	id, _ := must(0, "submit", "sh", "echo one; sleep 60")
	id = strings.TrimSpace(id)
	must(0, "submit", "sh", "sleep 60")
	_, errOut = must(75, "submit", "sh", "true")
	if !strings.Contains(errOut, "agent at capacity (2/2 parallel tasks running)") {
		t.Fatalf("at capacity: %q", errOut)
	}
	out, _ = must(0, "ps", "--active")
	if strings.Count(out, "running") != 2 {
		t.Fatalf("ps --active:\n%s", out)
	}
	out, _ = must(0, "ps", "--json", "--status", "rejected")
	var page struct {
		Executions []client.Execution `json:"executions"`
	}
	if json.Unmarshal([]byte(out), &page); len(page.Executions) != 1 {
		t.Fatalf("ps --json --status rejected: %s", out)
	}
	testutil.WaitFor(t, 20*time.Second, "first line logged", func() bool {
		out, _ := must(0, "logs", id)
		return strings.Contains(out, "one")
	})
	out, _ = must(0, "agents", "slots", "sh")
	if !strings.Contains(out, "2/2 slots used") {
		t.Fatalf("slots: %s", out)
	}
	out, _ = must(0, "cancel", id, "--wait")
	if !strings.Contains(out, id+": cancelled") {
		t.Fatalf("cancel --wait: %s", out)
	}
	out, _ = must(0, "logs", id, "-f", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last client.Execution
	if json.Unmarshal([]byte(lines[len(lines)-1]), &last); last.Status != corral.StatusCancelled {
		t.Fatalf("logs -f --json did not end with the execution: %s", out)
	}
	must(1, "cancel", id)

	out, _ = must(0, "schedules", "create", "sh", "--cron", "0 9 * * 1-5", "--tz", "Europe/Paris", "--input", "echo scheduled", "--json")
	var sc client.Schedule
	if err := json.Unmarshal([]byte(out), &sc); err != nil || sc.ID == "" || sc.NextFireAt == nil || !sc.Enabled {
		t.Fatalf("schedules create: %v %s", err, out)
	}
	out, _ = must(0, "schedules", "list", "sh")
	if !strings.Contains(out, sc.ID) || !strings.Contains(out, "Europe/Paris") {
		t.Fatalf("schedules list: %s", out)
	}
	out, _ = must(0, "schedules", "list")
	if !strings.Contains(out, sc.ID) || !strings.Contains(out, " sh ") {
		t.Fatalf("schedules list of every agent: %s", out)
	}
	must(2, "schedules", "delete")
	must(0, "schedules", "update", "sh", sc.ID, "--disable", "--missed", "run_once")
	out, _ = must(0, "schedules", "list", "sh", "--json")
	var spage struct {
		Schedules  []client.Schedule `json:"schedules"`
		NextCursor string            `json:"next_cursor"`
	}
	if json.Unmarshal([]byte(out), &spage); len(spage.Schedules) != 1 || spage.NextCursor != "" {
		t.Fatalf("after update: %s", out)
	}
	if scs := spage.Schedules; scs[0].Enabled || scs[0].Missed != "run_once" || scs[0].NextFireAt != nil {
		t.Fatalf("after update: %s", out)
	}
	// Pages: a second schedule, listed one at a time.
	must(0, "schedules", "create", "sh", "--cron", "@hourly", "--input", "echo two")
	out, errOut = must(0, "schedules", "list", "sh", "--limit", "1")
	if !strings.Contains(out, sc.ID) || !strings.Contains(errOut, "more: corral schedules list sh --cursor ") {
		t.Fatalf("first page: %s / %s", out, errOut)
	}
	cur := strings.TrimSpace(errOut[strings.Index(errOut, "--cursor ")+len("--cursor "):])
	out, errOut = must(0, "schedules", "list", "sh", "--limit", "1", "--cursor", cur)
	if strings.Contains(out, sc.ID) || !strings.Contains(out, "echo two") || errOut != "" {
		t.Fatalf("second page: %s / %s", out, errOut)
	}
	trig, _ := must(0, "schedules", "trigger", "sh", sc.ID)
	if e := waitTerminal(t, s.c, strings.TrimSpace(trig), 20*time.Second); e.Stdout != "scheduled\n" || e.Trigger != "schedule" {
		t.Fatalf("triggered run: %+v", e)
	}
	must(0, "schedules", "delete", "sh", sc.ID)
	must(1, "schedules", "delete", "sh", sc.ID)
	must(2, "schedules", "frobnicate", "sh")
	must(2, "submit", "sh")
	_, errOut = must(1, "agents", "delete", "sh")
	if !strings.Contains(errOut, "queued or running") {
		t.Fatalf("delete busy agent: %q", errOut)
	}

	// No service there: a clear message and exit 69.
	stopped := &served{t: t, tag: tag, addr: "127.0.0.1:1", data: t.TempDir()}
	if _, errOut, code := stopped.cli("ps"); code != 69 || !strings.Contains(errOut, "corral serve") {
		t.Fatalf("unreachable service: %d %q", code, errOut)
	}
	list, _, _ := s.c.Executions(bg, client.ListOptions{Statuses: []corral.Status{corral.StatusRunning}})
	for _, e := range list {
		s.c.Cancel(bg, e.ID)
		waitTerminal(t, s.c, e.ID, 20*time.Second)
	}
	s.stop()
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}
