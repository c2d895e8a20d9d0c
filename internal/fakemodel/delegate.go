package fakemodel

import "encoding/json"

// What the delegate scenario submits, and to whom.
const (
	// DelegateAgent is the corral agent the delegate scenario hands its
	// task to, and DelegateInput the task.
	DelegateAgent = "corral-fake-delegate"
	DelegateInput = "corral-fake-delegated-task"
)

// The delegate scenario has a file of its own so that the scenarios of
// scenarios.go stay as they are.
func init() {
	named["delegate"] = struct {
		about string
		make  func(Options) Scenario
	}{"load corral's service tools with ToolSearch, submit " + DelegateInput + " to agent " + DelegateAgent + " (mcp__corral__submit_task), wait for it (mcp__corral__wait_execution), then answer with " + FinalPrefix + "and the result it returned", func(o Options) Scenario {
		return steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "select:mcp__corral__submit_task,mcp__corral__wait_execution", "max_results": 2}}}}
			},
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "mcp__corral__submit_task", Input: map[string]any{"agent": DelegateAgent, "input": DelegateInput}}}}
			},
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "mcp__corral__wait_execution", Input: map[string]any{"id": resultField(r.LastResult(), "id"), "timeout_ms": 120000}}}}
			},
			func(r *Request) Reply {
				return Reply{Text: FinalPrefix + resultField(r.LastResult(), "result")}
			},
		)
	}}
}

// resultField reads a string field of a tool's JSON result; "" when the
// result is not JSON or has no such field.
func resultField(result, name string) string {
	var v map[string]any
	if json.Unmarshal([]byte(result), &v) != nil {
		return ""
	}
	s, _ := v[name].(string)
	return s
}
