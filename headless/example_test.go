package headless_test

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/corralrun/corral/headless"
)

// A turn of Claude Code with a budget, a tighter stall limit for one MCP
// server, the permission mode it must run in, and a transcript. (Not run:
// it needs Claude Code and credentials.)
func Example_claude() {
	turn, err := headless.Start(context.Background(), &headless.Spec{
		Args: []string{"claude", "-p", "--output-format", "stream-json", "--verbose",
			"--permission-mode", "bypassPermissions", "Fix the failing test"},
		Timeout:               2 * time.Hour,
		ToolLimits:            []headless.ToolLimit{{Tool: "mcp__jira__*", Timeout: 5 * time.Minute}},
		RequirePermissionMode: "bypassPermissions",
		TranscriptPath:        "turn.jsonl",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := turn.Wait() // at the end of the turn
	fmt.Println(r.Status, r.ErrorType, r.SessionID)
	if r.CostUSD != nil { // nil when the agent reported no cost
		fmt.Printf("$%.4f\n", *r.CostUSD)
	}
	turn.Close() // waits for the tree to be gone
}

// A turn whose agent prints its result and then lingers, with a child
// holding its stdout: Wait returns at the result, and Close once the tree
// has been torn down.
func ExampleStart() {
	fakeAgent, err := buildFakeAgent() // a scripted stand-in for claude
	if err != nil {
		fmt.Println(err)
		return
	}
	turn, err := headless.Start(context.Background(), &headless.Spec{
		Args:    []string{fakeAgent, "-linger", "1h", "linger"},
		Timeout: time.Minute,
		OnEvent: func(e headless.Event) {
			if e.Kind == headless.KindToolUse {
				fmt.Println("tool call:", e.ToolName)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, _ := turn.Wait()
	fmt.Println(r.Status, r.FinalizedBy, r.Text)
	full, _ := turn.Close()
	fmt.Println("survivors:", full.Process.Survivors)
	// Output:
	// tool call: mcp__github__create_issue
	// succeeded result Done: issue #1.
	// survivors: 0
}

// Reading a turn's stream afterwards, from a transcript or a log: the
// Parser and the Timeline a Turn itself uses give its tool calls, its
// session and its answer.
func ExampleTimeline() {
	stream := `{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"go test ./..."}}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"FAIL: TestX","is_error":true}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"mcp__jira__search","input":{"query":"flaky TestX"}}]}}
{"type":"result","subtype":"success","is_error":false,"result":"TestX is flaky.","session_id":"s-1"}
`
	var p headless.Parser
	tl := headless.Timeline{StallLimit: (&headless.Spec{}).StallLimit}
	at := time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC)
	lines := bufio.NewScanner(strings.NewReader(stream))
	for lines.Scan() {
		at = at.Add(time.Second) // the time each line was read, from the log
		evs := p.Parse(lines.Bytes(), at)
		for i := range evs {
			tl.Add(&evs[i])
		}
	}
	fmt.Println(p.Format, tl.SessionID(), tl.Model())
	for _, c := range tl.Tools(at) {
		fmt.Printf("%s %q %v open=%t error=%t %s stall limit %v\n", c.Name, c.Detail, c.Duration(), c.Open, c.Error, c.ErrorText, c.StallLimit())
	}
	fmt.Println(tl.Answer())
	// Output:
	// claude s-1 claude-sonnet-4-5
	// Bash "go test ./..." 1s open=false error=true FAIL: TestX stall limit 0s
	// mcp__jira__search "flaky TestX" 1s open=true error=false  stall limit 30m0s
	// TestX is flaky.
}
