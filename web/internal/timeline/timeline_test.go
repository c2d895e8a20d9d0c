package timeline

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

func build(lines ...string) *Timeline {
	var b Builder
	for i, l := range lines {
		b.Add(t0.Add(time.Duration(i)*time.Second), []byte(l))
	}
	return b.Timeline()
}

func TestClaudeToolCallsGetDurationsErrorsAndTheFinalAnswer(t *testing.T) {
	tl := build(
		`{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","tools":["Bash"]}`,
		`{"type":"assistant","message":{"content":[{"type":"text","text":"Let me look."}]},"session_id":"s-1"}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls -la","description":"list"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a.txt","is_error":false}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/x"}}]},"parent_tool_use_id":"t0"}`,
		`not json at all`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ENOENT: no such file"}],"is_error":true}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t3","name":"mcp__slack__post","input":{"channel":"#x"}}]}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"Two files.","session_id":"s-1"}`,
	)
	if tl.SessionID != "s-1" || tl.Model != "claude-sonnet-4-5" || tl.Answer != "Two files." {
		t.Fatalf("session %q model %q answer %q", tl.SessionID, tl.Model, tl.Answer)
	}
	if tl.Lines != 9 || tl.Invalid != 1 {
		t.Fatalf("lines %d invalid %d", tl.Lines, tl.Invalid)
	}
	if len(tl.Calls) != 3 {
		t.Fatalf("calls: %+v", tl.Calls)
	}
	bash, read, mcp := tl.Calls[0], tl.Calls[1], tl.Calls[2]
	if bash.Name != "Bash" || bash.Detail != "ls -la" || bash.Error || bash.Duration(t0) != time.Second {
		t.Fatalf("bash: %+v", bash)
	}
	if !read.Error || read.ErrorText != "ENOENT: no such file" || read.ParentID != "t0" || read.Duration(t0) != 2*time.Second {
		t.Fatalf("read: %+v", read)
	}
	if !mcp.Open() || mcp.Detail != `{"channel":"#x"}` || mcp.Duration(t0.Add(time.Minute)) != 53*time.Second {
		t.Fatalf("mcp: %+v", mcp)
	}
}

func TestCodexItemsAreToolCallsAndFailedCommandsAreErrors(t *testing.T) {
	tl := build(
		`{"type":"thread.started","thread_id":"th-1"}`,
		`{"type":"turn.started"}`,
		`{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"bash -lc ls","aggregated_output":"boom\n","exit_code":2,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"i2","type":"file_change","changes":[{"path":"a.txt","kind":"update"}],"status":"completed"}}`,
		`{"type":"item.started","item":{"id":"i3","type":"mcp_tool_call","server":"jira","tool":"search","arguments":{"query":"bug"},"status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"i4","type":"agent_message","text":"Done."}}`,
		`{"type":"error","message":"usage limit"}`,
		`{"type":"turn.failed","error":{"message":"You've hit your usage limit."}}`,
	)
	if tl.SessionID != "th-1" || tl.Answer != "Done." {
		t.Fatalf("session %q answer %q", tl.SessionID, tl.Answer)
	}
	if len(tl.Calls) != 3 {
		t.Fatalf("calls: %+v", tl.Calls)
	}
	if c := tl.Calls[0]; !c.Error || c.ErrorText != "boom" || c.Detail != "bash -lc ls" || c.Duration(t0) != time.Second {
		t.Fatalf("command: %+v", c)
	}
	if c := tl.Calls[1]; c.Error || c.Detail != "update a.txt" || c.Open() {
		t.Fatalf("file change: %+v", c)
	}
	if c := tl.Calls[2]; c.Name != "mcp__jira__search" || !c.Open() || c.Detail != "bug" {
		t.Fatalf("mcp: %+v", c)
	}
	if strings.Join(tl.Errors, "|") != "usage limit|You've hit your usage limit." {
		t.Fatalf("errors: %q", tl.Errors)
	}
}

func TestOddLinesAreCountedNotFatalAndMemoryIsBounded(t *testing.T) {
	var b Builder
	for _, l := range []string{"", "{", "[1,2]", `{"type":"user","message":"plain"}`, `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"nobody"}]}}`, "\xff\xfe"} {
		b.Add(t0, []byte(l))
	}
	for i := 0; i < MaxCalls+5; i++ {
		b.Add(t0, []byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"x`+strings.Repeat("9", i%7)+string(rune('a'+i%26))+`-`+time.Duration(i).String()+`","name":"Bash","input":{"command":"`+strings.Repeat("y", 5000)+`"}}]}}`))
	}
	tl := b.Timeline()
	if tl.Invalid != 4 {
		t.Fatalf("invalid: %d", tl.Invalid)
	}
	if len(tl.Calls) != MaxCalls || tl.Dropped != 5 {
		t.Fatalf("calls %d dropped %d", len(tl.Calls), tl.Dropped)
	}
	if d := tl.Calls[0].Detail; len(d) > maxText+len("…") {
		t.Fatalf("detail not cut: %d bytes", len(d))
	}
}

func FuzzAdd(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"n","input":{}}]}}`))
	f.Add([]byte(`{"type":"item.completed","item":{"id":"i","type":"command_execution","exit_code":1}}`))
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":[{"type":"text","text":"x"}]}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var b Builder
		b.Add(t0, line)
		b.Add(t0, line)
		tl := b.Timeline()
		for _, c := range tl.Calls {
			if len(c.Detail) > maxText+4 || len(c.ErrorText) > maxText+4 {
				t.Fatalf("unbounded text: %+v", c)
			}
		}
	})
}
