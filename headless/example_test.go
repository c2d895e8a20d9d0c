package headless_test

import (
	"context"
	"fmt"
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
	fmt.Println(r.Status, r.ErrorType, r.SessionID, r.CostUSD)
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
