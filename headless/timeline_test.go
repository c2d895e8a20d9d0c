package headless_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral/headless"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// read parses lines logged one second apart into a timeline, and counts
// the invalid ones.
func read(tl *headless.Timeline, lines ...string) (invalid int) {
	var p headless.Parser
	for i, l := range lines {
		for _, e := range p.Parse([]byte(l), t0.Add(time.Duration(i)*time.Second)) {
			if e.Kind == headless.KindInvalid {
				invalid++
			}
			tl.Add(&e)
		}
	}
	return invalid
}

func TestTimelineReadsClaudeToolCallsWithDurationsErrorsAndTheAnswer(t *testing.T) {
	var tl headless.Timeline
	invalid := read(&tl,
		`{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","tools":["Bash"]}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"Let me look."}]},"session_id":"s-1"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"description":"list","command":"ls -la"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt","is_error":false}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/x"}}]},"parent_tool_use_id":"t0"}`,
		`not json at all`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ENOENT: no such file"}],"is_error":true}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"mcp__slack__post","input":{"channel":  "#x"}}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"Two files.","session_id":"s-1"}`,
	)
	if tl.SessionID() != "s-1" || tl.Model() != "claude-sonnet-4-5" || tl.Answer() != "Two files." || invalid != 1 {
		t.Fatalf("session %q model %q answer %q invalid %d", tl.SessionID(), tl.Model(), tl.Answer(), invalid)
	}
	calls := tl.Tools(t0.Add(time.Minute))
	if len(calls) != 3 {
		t.Fatalf("calls: %+v", calls)
	}
	bash, rd, mcp := calls[0], calls[1], calls[2]
	if bash.Name != "Bash" || bash.Detail != "ls -la" || bash.Error || bash.Open || bash.Duration() != time.Second || !bash.Start.Equal(t0.Add(2*time.Second)) {
		t.Errorf("bash: %+v", bash)
	}
	if !rd.Error || rd.ErrorText != "ENOENT: no such file" || rd.ParentID != "t0" || rd.Detail != "/x" || rd.Duration() != 2*time.Second {
		t.Errorf("read: %+v", rd)
	}
	if !mcp.Open || mcp.Detail != `{"channel": "#x"}` || mcp.Duration() != 53*time.Second || mcp.Stalled() {
		t.Errorf("mcp: %+v", mcp)
	}
}

func TestTimelineReadsCodexItemsAndFailedCommandsAreErrors(t *testing.T) {
	var tl headless.Timeline
	read(&tl,
		`{"type":"thread.started","thread_id":"th-1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"boom\n","exit_code":2,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"a.txt","kind":"update"},{"path":"b.txt","kind":"add"}],"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"i3","type":"mcp_tool_call","server":"jira","tool":"search","arguments":{"query":"bug"},"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i5","type":"web_search","query":"go generics"}}`,
		`{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"Done."}}`,
		`{"type":"item.started","item":{"id":"i6","type":"agent_message","text":"Partial thoug"}}`,
		`{"type":"error","message":"usage limit"}`,
		`{"type":"turn.failed","error":{"message":"You've hit your usage limit."}}`,
	)
	if tl.SessionID() != "th-1" || tl.Answer() != "Done." {
		t.Fatalf("session %q answer %q: the answer is the last completed message", tl.SessionID(), tl.Answer())
	}
	calls := tl.Tools(t0.Add(time.Minute))
	if len(calls) != 4 {
		t.Fatalf("calls: %+v", calls)
	}
	if c := calls[0]; !c.Error || c.ErrorText != "boom" || c.Detail != "bash -lc ls" || c.Duration() != time.Second || c.Name != "command_execution" {
		t.Errorf("command: %+v", c)
	}
	if c := calls[1]; c.Error || c.Detail != "update a.txt, add b.txt" || c.Open || c.Duration() != 0 {
		t.Errorf("file change, reported only once completed: %+v", c)
	}
	if c := calls[2]; c.Name != "mcp__jira__search" || !c.Open || c.Detail != "bug" {
		t.Errorf("mcp: %+v", c)
	}
	if c := calls[3]; c.Name != "web_search" || c.Detail != "go generics" {
		t.Errorf("web search: %+v", c)
	}
	if got := strings.Join(tl.Errors(), "|"); got != "usage limit|You've hit your usage limit." {
		t.Errorf("errors: %q", got)
	}
}

func TestTimelineKeepsResultErrorsAndTheRealModel(t *testing.T) {
	var tl headless.Timeline
	read(&tl,
		`{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-4-1"}`,
		`{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 429"}]},"error":"rate_limit"}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"  "}]}}`,
		`{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["first","second"]}`,
	)
	if tl.Model() != "claude-opus-4-1" {
		t.Errorf("model %q: a synthetic message must not replace it", tl.Model())
	}
	if got := strings.Join(tl.Errors(), "|"); got != "rate_limit|first|second" {
		t.Errorf("errors %q", got)
	}
	if tl.Answer() != "API Error: 429" {
		t.Errorf("answer %q: with no result text, the last words that are not blank", tl.Answer())
	}
}

// The service logs a stream line once per event it yields, and a page
// reads the log again while the run goes on: reading a line twice must
// not add calls or reopen them.
func TestTimelineIgnoresARepeatedOpenOrResult(t *testing.T) {
	lines := []string{
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"b","name":"Read","input":{}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"ok"}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nobody","content":"?"}]}}`,
	}
	var once, twice headless.Timeline
	read(&once, lines...)
	var doubled []string
	for _, l := range lines {
		doubled = append(doubled, l, l)
	}
	read(&twice, doubled...)
	a, b := once.Tools(t0), twice.Tools(t0)
	if len(a) != 2 || len(b) != 2 || a[0].Open || !a[1].Open || b[0].Open || !b[1].Open || a[0].ID != "a" || b[1].ID != "b" {
		t.Fatalf("once %+v\ntwice %+v", a, b)
	}
}

func TestTimelineToleratesOddLinesAndBoundsMemory(t *testing.T) {
	tl := headless.Timeline{MaxTools: 50}
	invalid := read(&tl, "", "{", "[1,2]", `{"type":"user","message":"plain"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nobody"}]}}`, "\xff\xfe",
		"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}}")
	if invalid != 3 || len(tl.Tools(t0)) != 0 {
		t.Fatalf("invalid %d calls %+v", invalid, tl.Tools(t0))
	}
	if a := tl.Answer(); !utf8.ValidString(a) || a != "caf\uFFFD" {
		t.Errorf("answer %q: invalid UTF-8 becomes U+FFFD", a)
	}
	var lines []string
	for i := range 55 {
		lines = append(lines, `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x`+strings.Repeat("9", i)+`","name":"Bash","input":{"command":"`+strings.Repeat("y", 5000)+`"}}]}}`)
	}
	lines = append(lines, `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"j","name":"Write","input":{"content":"`+strings.Repeat("z ", 5000)+`"}}]}}`)
	lines = append(lines, `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","is_error":true,"content":"`+strings.Repeat("é", 5000)+`"}]}}`)
	read(&tl, lines...)
	calls := tl.Tools(t0)
	if len(calls) != 50 || tl.ToolsDropped() != 6 {
		t.Fatalf("calls %d dropped %d", len(calls), tl.ToolsDropped())
	}
	c := calls[0]
	if len(c.Detail) > headless.MaxDetail+len("…") || !strings.HasSuffix(c.Detail, "…") {
		t.Errorf("detail not cut: %d bytes", len(c.Detail))
	}
	if len(c.ErrorText) > headless.MaxDetail+len("…") || !strings.HasSuffix(c.ErrorText, "…") || !utf8.ValidString(c.ErrorText) {
		t.Errorf("error text not cut at a rune: %d bytes %q", len(c.ErrorText), c.ErrorText[len(c.ErrorText)-8:])
	}
}

func TestTimelineMarksCallsPastTheirStallLimit(t *testing.T) {
	spec := &headless.Spec{StallTimeout: 5 * time.Second, ToolLimits: []headless.ToolLimit{{Tool: "Bash", Timeout: time.Hour}}}
	tl := headless.Timeline{StallLimit: spec.StallLimit}
	read(&tl,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"1","name":"mcp__jira__search","input":{}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"2","name":"Bash","input":{}}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"3","name":"Read","input":{}}]}}`,
	)
	state := func(now time.Time) (s []bool) {
		for _, c := range tl.Tools(now) {
			s = append(s, c.Stalled())
		}
		return s
	}
	if got := state(t0.Add(4 * time.Second)); !reflect.DeepEqual(got, []bool{false, false, false}) {
		t.Errorf("within the limits: %v", got)
	}
	if got := state(t0.Add(5 * time.Second)); !reflect.DeepEqual(got, []bool{true, false, false}) {
		t.Errorf("MCP call at its limit: %v", got)
	}
	if c := tl.Tools(t0)[1]; c.StallLimitMS != 3600e3 {
		t.Errorf("Bash limit %v ms, want the per-tool limit", c.StallLimitMS)
	}
}

func TestParserDetectsTheFormatNumbersEventsAndMarksTheFinalResult(t *testing.T) {
	var p headless.Parser
	if evs := p.Parse([]byte(`{"type":"hello"}`), t0); len(evs) != 1 || evs[0].Kind != headless.KindUnknown || p.Format != headless.FormatAuto {
		t.Fatalf("a type of neither format: %+v, format %s", evs, p.Format)
	}
	var seqs []int64
	var final []bool
	for _, l := range []string{
		`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"a","task_type":"local_agent"}]}`,
		``,
		`{"type":"result","subtype":"success","result":"segment"}`,
		`{"type":"system","subtype":"background_tasks_changed","tasks":[]}`,
		`{"type":"result","subtype":"success","result":"final"}`,
	} {
		for _, e := range p.Parse([]byte(l), t0) {
			seqs = append(seqs, e.Seq)
			if e.Kind == headless.KindResult {
				final = append(final, e.Final)
			}
		}
	}
	if p.Format != headless.FormatClaude || !reflect.DeepEqual(seqs, []int64{2, 3, 4, 5}) || !reflect.DeepEqual(final, []bool{false, true}) {
		t.Fatalf("format %s seqs %v final %v", p.Format, seqs, final)
	}
}

func TestParserReadsACutLineUpToTheCut(t *testing.T) {
	line := []byte(`{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":"` + strings.Repeat("x", 1000) + `","is_error":false}]}}`)
	cut := line[:200]
	var p headless.Parser
	p.Parse([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]}}`), t0)
	if evs := p.Parse(cut, t0); len(evs) != 1 || evs[0].Kind != headless.KindInvalid || evs[0].Error != "incomplete JSON object" {
		t.Fatalf("a whole line that ends early is invalid: %+v", evs)
	}
	if evs := p.ParseCut(cut, t0); len(evs) != 1 || evs[0].Kind != headless.KindToolResult || evs[0].ToolID != "t1" || !evs[0].Cut {
		t.Fatalf("a cut line is read up to the cut: %+v", evs)
	}
	bounded := headless.Parser{MaxLine: 200}
	if evs := bounded.Parse(line, t0); len(evs) != 1 || evs[0].Kind != headless.KindToolResult || !evs[0].Cut || !evs[0].RawTruncated {
		t.Fatalf("a line over MaxLine is cut and read: %+v", evs)
	}
}

// The Timeline a Turn reports and the one read back from the turn's
// transcript are the same, as the web UI reads it from the service's log:
// one reader, one fold.
func TestTimelineOfATranscriptIsTheTurns(t *testing.T) {
	for _, sc := range []struct {
		name  string
		flags []string
	}{
		{"success", nil},
		{"fanout", []string{"-wait", "50ms"}},
		{"rate-limit", nil},
		{"codex", nil},
		{"codex-failed", nil},
		{"hung-mcp", nil},
	} {
		t.Run(sc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "turn.jsonl")
			spec := agent(t, sc.name, sc.flags...)
			spec.TranscriptPath = path
			spec.StallTimeout = 200 * time.Millisecond
			turn := start(t, context.Background(), spec)
			wait(t, turn)
			r := closeTurn(t, turn)

			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p := headless.Parser{}
			tl := headless.Timeline{StallLimit: spec.StallLimit}
			lines := bufio.NewScanner(f)
			lines.Buffer(nil, 1<<20)
			for lines.Scan() {
				for _, e := range p.Parse(lines.Bytes(), t0) {
					tl.Add(&e)
				}
			}
			if err := lines.Err(); err != nil {
				t.Fatal(err)
			}
			if len(r.Tools) == 0 && r.FinalizedBy != headless.FinalizedByResult {
				t.Fatalf("the scenario made no tool call: %+v", r)
			}
			got := tl.Tools(t0)
			if len(got) != len(r.Tools) {
				t.Fatalf("transcript: %+v\nturn: %+v", got, r.Tools)
			}
			for i := range got {
				a, b := got[i], r.Tools[i]
				if a.ID != b.ID || a.Name != b.Name || a.Detail != b.Detail || a.ParentID != b.ParentID || a.Open != b.Open ||
					a.Error != b.Error || a.ErrorText != b.ErrorText || a.StallLimitMS != b.StallLimitMS {
					t.Errorf("call %d: transcript %+v, turn %+v", i, a, b)
				}
			}
			if tl.SessionID() != r.SessionID || tl.Model() != r.Model || !reflect.DeepEqual(tl.Errors(), r.AgentErrors) {
				t.Errorf("transcript: %q %q %q; turn: %q %q %q", tl.SessionID(), tl.Model(), tl.Errors(), r.SessionID, r.Model, r.AgentErrors)
			}
			if r.Text != "" && tl.Answer() != r.Text {
				t.Errorf("answer %q, turn's %q", tl.Answer(), r.Text)
			}
			if r.Format != p.Format {
				t.Errorf("format %s, turn's %s", p.Format, r.Format)
			}
		})
	}
}

// FuzzTimeline feeds arbitrary lines, whole and cut, through a Parser and a
// Timeline, and checks that what they keep stays within its bounds.
func FuzzTimeline(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}}`), uint16(0))
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"command_execution","exit_code":1}}`), uint16(40))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"x"}]}]}}`), uint16(90))
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a","kind":"add"},7,{"path":null}]}}`), uint16(0))
	f.Add([]byte(`{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"s","tool":"t","arguments":"\u00e9  x"}}`), uint16(3))
	f.Fuzz(func(t *testing.T, line []byte, cutAt uint16) {
		p := headless.Parser{MaxEventText: 64}
		tl := headless.Timeline{MaxTools: 3, StallLimit: (&headless.Spec{}).StallLimit}
		cut := line[:min(int(cutAt), len(line))]
		for i := range 3 {
			evs := p.ParseCut(cut, t0)
			if i < 2 {
				evs = p.Parse(line, t0)
			}
			for _, e := range evs {
				if len(e.Detail) > headless.MaxDetail+len("…") || !utf8.ValidString(e.Detail) {
					t.Fatalf("detail out of bounds: %q", e.Detail)
				}
				tl.Add(&e)
			}
		}
		calls := tl.Tools(t0)
		if len(calls) > 3 {
			t.Fatalf("%d calls kept, bound 3", len(calls))
		}
		for _, c := range calls {
			if len(c.Detail) > headless.MaxDetail+len("…") || len(c.ErrorText) > headless.MaxDetail+len("…") {
				t.Fatalf("unbounded text: %+v", c)
			}
		}
		if len(tl.Errors()) > 20 || len(tl.Answer()) > 64*3+len("…") {
			t.Fatalf("errors %d answer %d bytes", len(tl.Errors()), len(tl.Answer()))
		}
		if _, err := json.Marshal(calls); err != nil {
			t.Fatal(err)
		}
	})
}
