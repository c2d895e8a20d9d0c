package web

import (
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
)

var t0 = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func execAt(id string, st corral.Status, created time.Duration, dur time.Duration) *corral.Execution {
	e := &corral.Execution{ID: id, Outcome: corral.Outcome{Status: st}, CreatedAt: t0.Add(created)}
	if dur > 0 {
		s := e.CreatedAt
		e.StartedAt = &s
		e.DurationMS = dur.Milliseconds()
	}
	return e
}

func TestChartStacksOutcomesPerIntervalAndPlotsDurations(t *testing.T) {
	execs := []*corral.Execution{
		execAt("a", corral.StatusSucceeded, 10*time.Minute, 2*time.Second),
		execAt("b", corral.StatusSucceeded, 20*time.Minute, 4*time.Second),
		execAt("c", corral.StatusFailed, 30*time.Minute, time.Minute),
		execAt("d", corral.StatusRejected, 5*time.Hour, 0),
		execAt("old", corral.StatusSucceeded, -time.Hour, time.Second), // outside
	}
	c := buildChart(execs, t0, t0.Add(24*time.Hour), t0.Add(24*time.Hour), "the last 24 hours")
	if c.Empty {
		t.Fatal("chart empty")
	}
	if !strings.HasPrefix(c.Summary, "4 runs in the last 24 hours: 2 succeeded, 1 failed, 1 other.") || !strings.Contains(c.Summary, "longest 1m 00s") {
		t.Fatalf("summary: %q", c.Summary)
	}
	if len(c.Rows) != 2 || c.Rows[0].Succeeded != 2 || c.Rows[0].Failed != 1 || c.Rows[1].Other != 1 {
		t.Fatalf("rows: %+v", c.Rows)
	}
	if len(c.Segments) != 3 || len(c.Dots) != 3 {
		t.Fatalf("segments %d dots %d", len(c.Segments), len(c.Dots))
	}
	// Two succeeded runs and one failed share the first bar, stacked: the
	// failed segment on top, half as tall.
	ok, bad := c.Segments[0], c.Segments[1]
	if ok.Tone != "ok" || bad.Tone != "bad" || bad.Y+bad.H != ok.Y || ok.H != 2*bad.H {
		t.Fatalf("stack: %+v %+v", ok, bad)
	}
	// Longer runs sit higher on the duration scale.
	if !(c.Dots[2].Y < c.Dots[1].Y && c.Dots[1].Y < c.Dots[0].Y) {
		t.Fatalf("durations not ordered on the scale: %+v", c.Dots)
	}
	for _, d := range c.Dots {
		if d.X < c.PlotX || d.X > c.Right || d.Y < c.DurY || d.Y > c.DurBase {
			t.Fatalf("dot outside the plot: %+v", d)
		}
	}
	if e := buildChart(nil, t0, t0.Add(time.Hour), t0, "the last hour"); !e.Empty || e.Summary != "No runs in the last hour." {
		t.Fatalf("empty chart: %+v", e)
	}
}

func TestTimelineHighlightsErrorsStallsAndUnfinishedCalls(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// The stall limits are the agent's, as the service gives them.
	timeline := func(a *corral.Agent) *headless.Timeline {
		l := newStreamLog(a)
		l.add(at(0), `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"1","name":"Bash","input":{"command":"ls"}}]}}`)
		l.add(at(time.Second), `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"1","is_error":true,"content":"boom"}]}}`)
		l.add(at(2*time.Second), `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"2","name":"mcp__jira__search","input":{}}]}}`)
		l.add(at(3*time.Second), `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"3","name":"Read","input":{}}]}}`)
		return &l.tl
	}
	agent := &corral.Agent{StallTimeout: corral.Duration(5 * time.Second)}
	tl := timeline(agent)
	states := func(v *execView) string {
		var s []string
		for _, c := range calls(v) {
			s = append(s, c.State)
		}
		return strings.Join(s, " ")
	}
	running := &execView{E: &corral.Execution{Outcome: corral.Outcome{Status: corral.StatusRunning}}, Agent: agent, Timeline: tl, Now: at(4 * time.Second)}
	if got := states(running); got != "error open open" {
		t.Fatalf("running, within limits: %s", got)
	}
	running.Now = at(8 * time.Second) // the MCP call is past its 5 s limit
	if got := states(running); got != "error stalled open" {
		t.Fatalf("running, MCP call past its limit: %s", got)
	}
	fin := at(10 * time.Second)
	stalled := &execView{E: &corral.Execution{Outcome: corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStall}, FinishedAt: &fin}, Agent: agent, Timeline: tl, Now: at(time.Hour)}
	if got := states(stalled); got != "error stalled stalled" {
		t.Fatalf("turn failed with a stall: %s", got)
	}
	cancelled := &execView{E: &corral.Execution{Outcome: corral.Outcome{Status: corral.StatusCancelled}, FinishedAt: &fin}, Agent: &corral.Agent{}, Timeline: timeline(&corral.Agent{}), Now: at(time.Hour)}
	if got := states(cancelled); got != "error unfinished unfinished" {
		t.Fatalf("cancelled turn: %s", got)
	}
	if c := calls(cancelled)[1]; c.Dur != 8*time.Second || c.Limit != 30*time.Minute {
		t.Fatalf("duration %v limit %v: an open call lasts until the run ended; MCP's default limit applies", c.Dur, c.Limit)
	}
	if c := calls(cancelled)[0]; c.ErrorText != "boom" || c.Detail != "ls" || c.Dur != time.Second {
		t.Fatalf("failed call %+v", c.ToolCall)
	}
}

func TestEventLinesAreSummarizedInOneLine(t *testing.T) {
	for line, want := range map[string]string{
		`{"type":"system","subtype":"init","model":"m1"}`:                                                         "other|session started, model m1",
		`{"type":"assistant","message":{"content":[{"type":"text","text":"Hi."}]}}`:                               "text|Hi.",
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}`: `tool|→ Bash {"command":"ls"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","is_error":true}]}}`:                          "error|← error",
		`{"type":"result","subtype":"success","result":"Done."}`:                                                  "result|result: Done.",
		`{"type":"result","subtype":"error_max_turns","is_error":true}`:                                           "error|result error_max_turns",
		`{"type":"item.started","item":{"type":"command_execution","command":"ls","status":"in_progress"}}`:       "tool|→ command ls · in_progress",
		`{"type":"item.completed","item":{"type":"agent_message","text":"Bye."}}`:                                 "text|Bye.",
		`{"type":"turn.failed","error":{"message":"limit"}}`:                                                      `error|turn.failed {"message":"limit"}`,
		`not json`: "other|not json",
	} {
		k, s := summarize(line)
		if got := k + "|" + s; got != want {
			t.Errorf("summarize(%s) = %q, want %q", line, got, want)
		}
	}
}
