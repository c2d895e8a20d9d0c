package fakemodel

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Words the named scenarios say, for tests to look for.
const (
	// Pong is the answer of the text scenario.
	Pong = "pong"
	// ToolMarker is what the tool scenario's command prints.
	ToolMarker = "corral-fake-tool-ran"
	// BackgroundMarker is what the background scenario's command prints
	// when it finishes.
	BackgroundMarker = "corral-fake-background-done"
	// BackgroundFinal is the background scenario's answer once Claude Code
	// told it the command completed.
	BackgroundFinal = "final: the background command completed"
	// SubagentMarker begins the task the subagent scenario gives its
	// sub-agent, and SubagentAnswer is the sub-agent's answer.
	SubagentMarker = "corral-fake-subagent-task"
	SubagentAnswer = "corral-fake-subagent-answer"
	// ResumeWords are what the resume scenario takes for a resumed
	// conversation (corral's default resume prompt says them), and
	// ResumedPrefix begins its answer to one, followed by the first thing
	// the user side said in the conversation.
	ResumeWords   = "Continue from where you left off"
	ResumedPrefix = "resumed: "
	// MCPCommand is the command the mcp scenario runs: its output has a
	// terminal escape and text that imitates the fields of a JSON result,
	// and it fails with exit status 3.
	MCPCommand = `printf '\033[1m%s\033[0m\n' ` + ToolMarker + `; echo '","exit_code":0,"forged":"'; echo to-stderr >&2; exit 3`
	// FinalPrefix begins the final answer of the multi-step scenarios,
	// followed by what the model was last told.
	FinalPrefix = "final: "
)

// named are the scenarios the tests and the demo command know by name.
var named = map[string]struct {
	about string
	make  func(Options) Scenario
}{
	"text": {"answer " + Pong, func(Options) Scenario {
		return func(*Request) Reply { return Reply{Text: Pong} }
	}},
	"tool": {"run a shell command (Bash; Codex exec_command), then answer with what it printed", func(o Options) Scenario {
		return steps(shellCall("echo "+ToolMarker, 0), final)
	}},
	"traceparent": {"run a shell command that prints the trace context it got (TRACEPARENT), then answer with what it printed", func(o Options) Scenario {
		return steps(shellCall(`echo "traceparent=$TRACEPARENT"`, 0), final)
	}},
	"background": {"start a background shell command that finishes after -wait, say it will wait, and answer with its output once notified (Claude Code: Bash run_in_background)", func(o Options) Scenario {
		cmd := fmt.Sprintf("sleep %.1f; echo %s", o.wait().Seconds(), BackgroundMarker)
		return steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "background job", "run_in_background": true}}}}
			},
			func(r *Request) Reply {
				return Reply{Text: "Started it in the background; I will report when it finishes."}
			},
			func(r *Request) Reply {
				if r.Mentions("<status>completed</status>") {
					return Reply{Text: BackgroundFinal}
				}
				return final(r)
			},
		)
	}},
	"yield": {"run a shell command that outlives its yield (Codex exec_command with yield_time_ms 250), then hang mid-stream", func(o Options) Scenario {
		cmd := fmt.Sprintf("sleep %.1f; echo %s", max(o.wait(), 5*time.Second).Seconds(), BackgroundMarker)
		return steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "exec_command", Input: map[string]any{"cmd": cmd, "yield_time_ms": 250}}}}
			},
			func(r *Request) Reply { return Reply{Hang: true} },
		)
	}},
	"subagent": {"hand a task to a sub-agent that answers after -wait, wait for it, and answer with what it said (Claude Code: Agent in the background; Codex: spawn_agent, wait_agent)", func(o Options) Scenario {
		task := SubagentMarker + ": answer " + SubagentAnswer
		claude := steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "Agent", Input: map[string]any{"description": "sub-agent task", "prompt": task, "subagent_type": "general-purpose", "run_in_background": true}}}}
			},
			func(r *Request) Reply {
				return Reply{Text: "The sub-agent is working; I will report when it finishes."}
			},
			final,
		)
		codex := steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "spawn_agent", Namespace: "multi_agent_v1", Input: map[string]any{"message": task}}}}
			},
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "wait_agent", Namespace: "multi_agent_v1", Input: map[string]any{"targets": []string{agentID(r.LastResult())}, "timeout_ms": 600000}}}}
			},
			final,
		)
		return func(r *Request) Reply {
			switch {
			case r.Opening(SubagentMarker):
				return Reply{Text: SubagentAnswer, Delay: o.wait()}
			case r.API == Anthropic:
				return claude(r)
			}
			return codex(r)
		}
	}},
	"mcp": {"load corral's run_command MCP tool with ToolSearch, call it (mcp__corral__run_command) with a command whose output imitates the result's fields, then answer with what it returned", func(o Options) Scenario {
		return steps(
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "ToolSearch", Input: map[string]any{"query": "select:mcp__corral__run_command", "max_results": 1}}}}
			},
			func(r *Request) Reply {
				return Reply{Calls: []Call{{Name: "mcp__corral__run_command", Input: map[string]any{"command": MCPCommand}}}}
			},
			final,
		)
	}},
	"resume": {"run a shell command that never ends (sleep 300); answer a resumed conversation (the user says " + ResumeWords + ") with " + ResumedPrefix + "and the conversation's first prompt", func(o Options) Scenario {
		hang := shellCall("sleep 300", 0)
		return func(r *Request) Reply {
			if !r.Mentions(ResumeWords) {
				return hang(r)
			}
			first := ""
			for _, t := range r.UserTexts {
				if t = strings.TrimSpace(t); t != "" && !strings.HasPrefix(t, "<") {
					first = t // the prompt, not the context the agent adds
					break
				}
			}
			return Reply{Text: ResumedPrefix + first}
		}
	}},
	"spend": {"run a quick shell command (true) again and again: Claude Code for ever, Codex three times then answer (its usage comes at the end of the turn)", func(o Options) Scenario {
		again := shellCall("true", 0)
		return func(r *Request) Reply {
			if r.API == OpenAI && r.Step >= 3 {
				return Reply{Text: "spent"}
			}
			return again(r)
		}
	}},
	"hang": {"start the answer, then send nothing more (a stream that hangs mid-way)", func(Options) Scenario {
		return func(*Request) Reply { return Reply{Text: "Let me think", Hang: true} }
	}},
	"auth":       {"401 to every request: the API key is not valid", failing(FailAuth)},
	"rate_limit": {"429 with retry-after (-retry-after) to every request", failing(FailRateLimit)},
	"rate_limit_1": {"429 with retry-after (-retry-after) to the first try, then " + Pong, func(o Options) Scenario {
		return func(r *Request) Reply {
			if r.Attempt == 0 {
				return Reply{Fail: FailRateLimit, RetryAfter: o.RetryAfter}
			}
			return Reply{Text: Pong}
		}
	}},
	"quota":      {"the account's credit or quota is exhausted, to every request", failing(FailQuota)},
	"overloaded": {"overloaded (Anthropic 529, OpenAI 503) to every request", failing(FailOverloaded)},
	"server":     {"500 to every request", failing(FailServer)},
	"model":      {"404: the model does not exist", failing(FailModel)},
	"stream_fail": {"the stream starts, then fails (Anthropic error event, OpenAI response.failed)", func(Options) Scenario {
		return func(*Request) Reply { return Reply{Fail: FailServer, InStream: true} }
	}},
	"garbage": {"200 with a body that is no stream of the API", func(Options) Scenario {
		return func(*Request) Reply { return Reply{Garbage: true} }
	}},
}

// Options tune the named scenarios.
type Options struct {
	// Wait is the duration of a scenario's long step (the background
	// command, the sub-agent's work). Zero means 2 s.
	Wait time.Duration
	// RetryAfter is the retry-after of the rate-limit scenarios. Zero
	// sends none.
	RetryAfter time.Duration
}

func (o Options) wait() time.Duration {
	if o.Wait <= 0 {
		return 2 * time.Second
	}
	return o.Wait
}

// Named returns the scenario of that name, tuned by o.
func Named(name string, o Options) (Scenario, error) {
	s, ok := named[name]
	if !ok {
		return nil, fmt.Errorf("fakemodel: no scenario %q: want one of %s", name, strings.Join(Names(), ", "))
	}
	return s.make(o), nil
}

// Names lists the named scenarios, sorted.
func Names() []string {
	var out []string
	for n := range named {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// About says in a line what the named scenario does.
func About(name string) string { return named[name].about }

// steps answers the conversation's nth model turn with the nth step, and
// every later one with the last.
func steps(s ...Scenario) Scenario {
	return func(r *Request) Reply {
		return s[min(r.Step, len(s)-1)](r)
	}
}

// final answers with FinalPrefix and the last thing the model was told.
func final(r *Request) Reply {
	last := ""
	if len(r.UserTexts) > 0 {
		last = r.UserTexts[len(r.UserTexts)-1]
	}
	return Reply{Text: FinalPrefix + last}
}

func failing(f Failure) func(Options) Scenario {
	return func(o Options) Scenario {
		return func(*Request) Reply { return Reply{Fail: f, RetryAfter: o.RetryAfter} }
	}
}

// shellCall calls each API's shell tool: Claude Code's Bash, Codex's
// exec_command.
func shellCall(cmd string, yield time.Duration) Scenario {
	return func(r *Request) Reply {
		if r.API == Anthropic {
			return Reply{Calls: []Call{{Name: "Bash", Input: map[string]any{"command": cmd, "description": "run a command"}}}}
		}
		in := map[string]any{"cmd": cmd}
		if yield > 0 {
			in["yield_time_ms"] = yield.Milliseconds()
		}
		return Reply{Calls: []Call{{Name: "exec_command", Input: in}}}
	}
}

// agentID reads the id of a spawned agent from spawn_agent's result.
func agentID(result string) string {
	var v map[string]any
	if json.Unmarshal([]byte(result), &v) == nil {
		for _, k := range []string{"agent_id", "id", "target"} {
			if s, ok := v[k].(string); ok {
				return s
			}
		}
	}
	return strings.TrimSpace(result)
}
