// Command fakeagent replays scripted headless-agent scenarios with timing,
// for corral's tests and benchmarks. It speaks Claude Code's stream-json
// (and Codex's exec --json for the codex-* scenarios) on stdout, writes
// what a real agent writes on stderr, and behaves as badly as real agents
// do: it lingers after its result with a child holding the pipe, leaves MCP
// calls open forever, crashes, kills itself, ignores signals.
//
// Usage:
//
//	fakeagent [flags] SCENARIO
//
// Run it with -list for the scenarios. Every process it starts is its own
// re-execution ("fakeagent hold"), so a test that tags the environment
// finds them all.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	delay        = flag.Duration("delay", 0, "pause between lines")
	linger       = flag.Duration("linger", 10*time.Minute, "how long to stay after the final result (linger scenarios)")
	hold         = flag.Bool("hold", true, "after the final result, start a child that holds stdout open")
	exitAfter    = flag.Bool("exit-after-result", false, "exit right after the final result (the child, if any, keeps the pipe)")
	childNoTerm  = flag.Bool("child-ignores-term", false, "the pipe-holding child ignores SIGTERM")
	wait         = flag.Duration("wait", 500*time.Millisecond, "duration of the scenario's long step (a tool call, a background task, a gap)")
	tsFile       = flag.String("ts", "", "write the wall clock (unix ns) to this file just before the final result line")
	perm         = flag.String("perm", "bypassPermissions", "permissionMode reported in the init line")
	huge         = flag.Int("huge", 20<<20, "size in bytes of the huge line of the garbage scenario")
	ignoreInt    = flag.Bool("ignore-int", false, "ignore SIGINT (cancel scenario)")
	exitDelay    = flag.Duration("exit-delay", 0, "cancel scenario: after the result, wait this long before exiting (saving a session on the way out)")
	ignoreTerm   = flag.Bool("ignore-term", false, "ignore SIGTERM")
	pidFile      = flag.String("pidfile", "", "append the pids of this process and its children to this file")
	toolName     = flag.String("tool", "", "tool name for the hung and long tool scenarios")
	list         = flag.Bool("list", false, "list the scenarios and exit")
	echoEnv      = flag.String("echo-env", "", "success scenario: say the value of this environment variable (to test redaction)")
	sessionID    = "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11"
	scenarioList = map[string]struct {
		about string
		run   func()
	}{
		"success":           {"init, a tool call, an answer, a result; exits 0", success},
		"linger":            {"a result, then a child holding stdout and the agent lingering (or exiting with -exit-after-result)", lingerScenario},
		"hung-mcp":          {"an MCP tool call that never returns (stream silent)", hungMCP},
		"long-bash":         {"a Bash call open for -wait with no output, then a result", longBash},
		"fanout":            {"a background subagent: an intermediate result, notifications after -wait, then the final result", fanout},
		"auth-stderr":       {"'Invalid API key' on stderr, then hangs", authStderr},
		"auth-stream":       {"an assistant message with error authentication_failed, then hangs", authStream},
		"max-turns":         {"a result error_max_turns whose text mentions authentication", maxTurns},
		"max-budget":        {"a result error_max_budget_usd", maxBudget},
		"rate-limit":        {"an assistant rate_limit error, then a result success with is_error", rateLimit},
		"rate-limit-exit":   {"a rate limit message, then exit 1 without a result", rateLimitExit},
		"model":             {"an assistant model_not_found error, then a result with is_error", modelScenario},
		"is-error":          {"a result success with is_error true", isError},
		"garbage":           {"blank, non-JSON, invalid UTF-8, partial and huge lines, unknown types; then a result", garbage},
		"no-result":         {"init and text, then exit 0", noResult},
		"not-json":          {"plain text on stdout, exit 0 (forgot --output-format)", notJSON},
		"crash":             {"init, a stack trace on stderr, exit 3", crash},
		"self-kill":         {"init, then SIGKILL to itself", selfKill},
		"budget":            {"keeps talking forever (never idle, never done)", budget},
		"idle":              {"init, then silence with no tool open", idle},
		"permission":        {"init reporting -perm, then a tool call and a result", permission},
		"cancel":            {"a Bash call; on SIGINT a result error_during_execution and exit 130", cancelScenario},
		"no-newline":        {"a final result without a trailing newline, then exit 0", noNewline},
		"codex":             {"a Codex turn: a command, a message, turn.completed", codexOK},
		"codex-failed":      {"a Codex turn that fails with a usage-limit error", codexFailed},
		"codex-hung-mcp":    {"a Codex MCP call that never completes", codexHungMCP},
		"codex-auth":        {"a Codex turn failing authentication", codexAuth},
		"hold":              {"(internal) the pipe-holding child: sleeps", holdChild},
		"flood":             {"-huge bytes of realistic stream-json lines, then a result (throughput)", flood},
		"segment-then-exit": {"an intermediate result with a live background task, then exit 0", segmentThenExit},
		"dev-server":        {"a shell command started in the background that never ends (a dev server), a result, then silence", devServer},
	}
)

func main() {
	flag.Parse()
	if *list {
		names := make([]string, 0, len(scenarioList))
		for n := range scenarioList {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf("%-18s %s\n", n, scenarioList[n].about)
		}
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: fakeagent [flags] SCENARIO (fakeagent -list for the scenarios)")
		os.Exit(2)
	}
	sc, ok := scenarioList[flag.Arg(0)]
	if !ok {
		fmt.Fprintf(os.Stderr, "fakeagent: unknown scenario %q (fakeagent -list for the scenarios)\n", flag.Arg(0))
		os.Exit(2)
	}
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	recordPid(os.Getpid())
	sc.run()
}

func recordPid(pid int) {
	if *pidFile == "" {
		return
	}
	f, err := os.OpenFile(*pidFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, pid)
	f.Close()
}

// emit writes one line (one write, as agents do) after the -delay pause.
func emit(line string) {
	if *delay > 0 {
		time.Sleep(*delay)
	}
	os.Stdout.WriteString(line + "\n")
}

func stamp() {
	if *tsFile != "" {
		os.WriteFile(*tsFile, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
	}
}

func q(s string) string { return strconv.Quote(s) }

func initLine() string {
	return `{"type":"system","subtype":"init","cwd":"/tmp","session_id":"` + sessionID + `","tools":["Bash","Read","Task","mcp__github__create_issue"],"mcp_servers":[{"name":"github","status":"connected"}],"model":"claude-sonnet-4-5","permissionMode":` + q(*perm) + `,"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.0.0","uuid":"u0"}`
}

func text(s string) string {
	return `{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":` + q(s) + `}],"stop_reason":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":30}},"parent_tool_use_id":null,"session_id":"` + sessionID + `"}`
}

func toolUse(id, name, input string) string {
	return `{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":` + q(id) + `,"name":` + q(name) + `,"input":` + input + `}],"usage":{"input_tokens":40,"output_tokens":20}},"parent_tool_use_id":null,"session_id":"` + sessionID + `"}`
}

func toolResult(id, content string, isErr bool) string {
	return `{"type":"user","message":{"role":"user","content":[{"tool_use_id":` + q(id) + `,"type":"tool_result","content":` + q(content) + `,"is_error":` + strconv.FormatBool(isErr) + `}]},"parent_tool_use_id":null,"session_id":"` + sessionID + `"}`
}

func result(subtype string, isErr bool, text string, turns int, cost float64) string {
	return fmt.Sprintf(`{"type":"result","subtype":%q,"is_error":%t,"duration_ms":1234,"duration_api_ms":1000,"num_turns":%d,"result":%s,"session_id":%q,"total_cost_usd":%g,"usage":{"input_tokens":120,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":450},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":120,"outputTokens":450,"costUSD":%g,"contextWindow":200000}},"permission_denials":[],"uuid":"ur"}`,
		subtype, isErr, turns, q(text), sessionID, cost, cost)
}

func finalResult(s string) {
	stamp()
	emit(s)
}

func forever() {
	for {
		time.Sleep(time.Hour)
	}
}

// spawnHolder starts a child that inherits stdout and sleeps.
func spawnHolder() {
	args := []string{"hold"}
	if *childNoTerm {
		args = []string{"-ignore-term", "hold"}
	}
	if *pidFile != "" {
		args = append([]string{"-pidfile", *pidFile}, args...)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeagent: starting holder:", err)
		return
	}
}

func holdChild() { forever() }

func success() {
	emit(initLine())
	emit(text("Let me look."))
	if *echoEnv != "" {
		emit(text("The key is " + os.Getenv(*echoEnv) + " and a token ghp_abcdefghijklmnopqrstuvwxyz0123456789."))
	}
	emit(toolUse("toolu_1", "Bash", `{"command":"ls"}`))
	emit(toolResult("toolu_1", "a.txt\nb.txt", false))
	answer := "There are two files."
	if *echoEnv != "" {
		answer += " The key was " + os.Getenv(*echoEnv) + "."
	}
	emit(text(answer))
	finalResult(result("success", false, answer, 2, 0.0123))
}

func lingerScenario() {
	emit(initLine())
	emit(toolUse("toolu_1", "mcp__github__create_issue", `{"title":"x"}`))
	emit(toolResult("toolu_1", "created #1", false))
	emit(text("Done: issue #1."))
	if *hold {
		spawnHolder()
	}
	finalResult(result("success", false, "Done: issue #1.", 2, 0.02))
	if *exitAfter {
		os.Exit(0)
	}
	time.Sleep(*linger)
}

func hungMCP() {
	name := *toolName
	if name == "" {
		name = "mcp__slack__post_message"
	}
	emit(initLine())
	emit(text("Posting."))
	emit(toolUse("toolu_mcp", name, `{"channel":"#x"}`))
	forever()
}

func longBash() {
	name := *toolName
	if name == "" {
		name = "Bash"
	}
	emit(initLine())
	emit(toolUse("toolu_long", name, `{"command":"make test"}`))
	time.Sleep(*wait)
	emit(toolResult("toolu_long", "ok", false))
	emit(text("Tests pass."))
	finalResult(result("success", false, "Tests pass.", 2, 0.05))
}

func fanout() {
	emit(initLine())
	emit(toolUse("toolu_task", "Task", `{"description":"research","prompt":"dig","subagent_type":"general-purpose","run_in_background":true}`))
	emit(`{"type":"system","subtype":"task_started","task_id":"t1","tool_use_id":"toolu_task","description":"research","task_type":"local_agent","is_backgrounded":true,"session_id":"` + sessionID + `"}`)
	emit(toolResult("toolu_task", "Agent started in the background (task t1).", false))
	emit(`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"t1","task_type":"local_agent","description":"research","subagent_type":"general-purpose"},{"task_id":"sh1","task_type":"local_bash","description":"npm run dev"},{"task_id":"amb","task_type":"local_agent","ambient":true}],"session_id":"` + sessionID + `"}`)
	emit(text("I'll wait for the agent."))
	emit(result("success", false, "I'll wait for the agent.", 2, 0.01))
	time.Sleep(*wait)
	emit(`{"type":"system","subtype":"task_progress","task_id":"t1","summary":"reading files","session_id":"` + sessionID + `"}`)
	emit(`{"type":"system","subtype":"task_notification","task_id":"sh1","status":"completed","summary":"Background command \"npm run dev\" completed (exit code 0)","session_id":"` + sessionID + `"}`)
	emit(`{"type":"system","subtype":"task_notification","task_id":"t1","tool_use_id":"toolu_task","status":"completed","summary":"found 3 leads","session_id":"` + sessionID + `"}`)
	emit(`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"amb","task_type":"local_agent","ambient":true}],"session_id":"` + sessionID + `"}`)
	emit(text("The agent found 3 leads."))
	finalResult(result("success", false, "The agent found 3 leads.", 4, 0.07))
	time.Sleep(*linger)
}

func devServer() {
	emit(initLine())
	emit(toolUse("toolu_dev", "Bash", `{"command":"npm run dev","description":"Start the dev server","run_in_background":true}`))
	emit(`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"bdev1","task_type":"local_bash","description":"Start the dev server"}],"session_id":"` + sessionID + `"}`)
	emit(`{"type":"system","subtype":"task_started","task_id":"bdev1","tool_use_id":"toolu_dev","description":"Start the dev server","is_backgrounded":true,"task_type":"local_bash","session_id":"` + sessionID + `"}`)
	emit(toolResult("toolu_dev", "Command running in background with ID: bdev1.", false))
	emit(text("The dev server is running on port 3000."))
	emit(result("success", false, "The dev server is running on port 3000.", 2, 0.02))
	forever()
}

func segmentThenExit() {
	emit(initLine())
	emit(`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"t1","task_type":"local_agent"}]}`)
	emit(result("success", false, "Waiting for the agent.", 1, 0.01))
}

func authStderr() {
	emit(initLine())
	// A real agent reports the failure after its startup, not with it.
	time.Sleep(100*time.Millisecond + *delay)
	os.Stderr.WriteString("Invalid API key · Please run /login\n")
	forever()
}

func authStream() {
	emit(initLine())
	emit(`{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"Invalid API key · Please run /login"}]},"parent_tool_use_id":null,"session_id":"` + sessionID + `","error":"authentication_failed"}`)
	forever()
}

func maxTurns() {
	emit(initLine())
	emit(text("I was fixing the authentication module: invalid api key handling."))
	finalResult(`{"type":"result","subtype":"error_max_turns","is_error":true,"duration_ms":900,"num_turns":3,"session_id":"` + sessionID + `","total_cost_usd":0.31,"usage":{"input_tokens":1,"output_tokens":2},"errors":["Reached maximum number of turns (3); authentication failed earlier"]}`)
	os.Exit(0)
}

func maxBudget() {
	emit(initLine())
	finalResult(`{"type":"result","subtype":"error_max_budget_usd","is_error":true,"num_turns":7,"session_id":"` + sessionID + `","total_cost_usd":1.02,"usage":{"input_tokens":1,"output_tokens":2},"errors":["Reached maximum budget ($1)"]}`)
	os.Exit(0)
}

func rateLimit() {
	emit(initLine())
	emit(`{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: Request rejected (429) · rate limit exceeded"}]},"parent_tool_use_id":null,"session_id":"` + sessionID + `","error":"rate_limit"}`)
	finalResult(result("success", true, "API Error: Request rejected (429) · rate limit exceeded", 1, 0))
	os.Exit(1)
}

func rateLimitExit() {
	emit(initLine())
	emit(`{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1767225600"}]},"parent_tool_use_id":null,"session_id":"` + sessionID + `","error":"rate_limit"}`)
	os.Stderr.WriteString("Error: Claude AI usage limit reached\n")
	os.Exit(1)
}

func modelScenario() {
	emit(initLine())
	emit(`{"type":"assistant","message":{"id":"m","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"There's an issue with the selected model (claude-9). It may not exist or you may not have access to it."}]},"parent_tool_use_id":null,"session_id":"` + sessionID + `","error":"model_not_found"}`)
	finalResult(result("success", true, "There's an issue with the selected model (claude-9).", 1, 0))
	os.Exit(1)
}

func isError() {
	emit(initLine())
	finalResult(result("success", true, "API Error: 500 Internal server error", 1, 0.001))
	os.Exit(1)
}

func garbage() {
	emit(initLine())
	emit("")
	emit("   ")
	emit("Warning: something printed to stdout by a hook")
	emit("{not json at all")
	os.Stdout.Write([]byte("{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe bytes\"}]}}\n"))
	emit(`{"type":"brand_new_type","whatever":{"nested":[1,2,3]}}`)
	emit(`{"type":"system","subtype":"hook_response","unknown_field":true}`)
	// A partial line written in pieces.
	part := text("written in pieces")
	os.Stdout.WriteString(part[:10])
	time.Sleep(20 * time.Millisecond)
	os.Stdout.WriteString(part[10:] + "\n")
	// One huge line: a tool result of -huge bytes.
	var b strings.Builder
	b.Grow(*huge + 200)
	b.WriteString(`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_big","type":"tool_result","content":"`)
	chunk := strings.Repeat("0123456789abcdef", 64)
	for b.Len() < *huge {
		b.WriteString(chunk)
	}
	b.WriteString(`"}]},"parent_tool_use_id":null}`)
	emit(toolUse("toolu_big", "Read", `{"file_path":"/big"}`))
	emit(b.String())
	emit(`{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]},"extra":{"deep":[{"a":"}"},"]"]}}`)
	finalResult(result("success", false, "Survived the garbage.", 3, 0.04))
	os.Exit(0)
}

func noResult() {
	emit(initLine())
	emit(text("Working on it..."))
	os.Exit(0)
}

func notJSON() {
	emit("Here is my answer in plain text.")
	os.Exit(0)
}

func crash() {
	emit(initLine())
	emit(text("Starting."))
	os.Stderr.WriteString("TypeError: Cannot read properties of undefined (reading 'map')\n    at main (cli.js:1:2)\n")
	os.Exit(3)
}

func selfKill() {
	emit(initLine())
	emit(text("about to die"))
	if self, err := os.FindProcess(os.Getpid()); err == nil {
		self.Kill() // SIGKILL on Unix
	}
	forever()
}

func budget() {
	emit(initLine())
	for i := 0; ; i++ {
		emit(text(fmt.Sprintf("still thinking %d", i)))
		time.Sleep(50 * time.Millisecond)
	}
}

func idle() {
	emit(initLine())
	emit(text("Let me think."))
	forever()
}

func permission() {
	emit(initLine())
	emit(toolUse("toolu_1", "Bash", `{"command":"rm -rf build"}`))
	emit(toolResult("toolu_1", "", false))
	finalResult(result("success", false, "Cleaned.", 2, 0.01))
	os.Exit(0)
}

func cancelScenario() {
	if *ignoreInt {
		signal.Ignore(syscall.SIGINT)
	}
	ints := make(chan os.Signal, 1)
	if !*ignoreInt {
		signal.Notify(ints, syscall.SIGINT)
	}
	emit(initLine())
	emit(toolUse("toolu_b", "Bash", `{"command":"sleep 1000"}`))
	if *ignoreInt {
		forever()
	}
	<-ints
	emit(toolResult("toolu_b", "Interrupted by user", true))
	finalResult(result("error_during_execution", true, "", 2, 0.033))
	time.Sleep(*exitDelay)
	os.Exit(130)
}

func noNewline() {
	emit(initLine())
	stamp()
	os.Stdout.WriteString(result("success", false, "no newline at the end", 1, 0.002))
	os.Exit(0)
}

func codexOK() {
	emit(`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}`)
	emit(`{"type":"turn.started"}`)
	emit(`{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Listing files**"}}`)
	emit(`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}`)
	emit(`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"a.txt\n","exit_code":0,"status":"completed"}}`)
	emit(`{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"a.txt","kind":"update"}],"status":"completed"}}`)
	emit(`{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"One file: a.txt."}}`)
	stamp()
	emit(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122,"reasoning_output_tokens":64}}`)
	time.Sleep(*linger)
}

func codexFailed() {
	emit(`{"type":"thread.started","thread_id":"t-failed"}`)
	emit(`{"type":"turn.started"}`)
	emit(`{"type":"error","message":"You've hit your usage limit. Try again later."}`)
	stamp()
	emit(`{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again later."}}`)
	os.Exit(1)
}

func codexHungMCP() {
	emit(`{"type":"thread.started","thread_id":"t-hung"}`)
	emit(`{"type":"turn.started"}`)
	emit(`{"type":"item.started","item":{"id":"item_5","type":"mcp_tool_call","server":"jira","tool":"search","arguments":{"q":"x"},"status":"in_progress"}}`)
	forever()
}

func codexAuth() {
	emit(`{"type":"thread.started","thread_id":"t-auth"}`)
	emit(`{"type":"turn.started"}`)
	stamp()
	emit(`{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided"}}`)
	os.Exit(1)
}

// flood writes -huge bytes of a realistic mix of lines, then a result.
func flood() {
	emit(initLine())
	lines := []string{
		text(strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)),
		toolUse("toolu_f", "Read", `{"file_path":"/src/main.go","limit":400}`),
		toolResult("toolu_f", strings.Repeat("func main() {\n\tfmt.Println(\"hi\")\n}\n", 60), false),
	}
	n := 0
	var b strings.Builder
	for n < *huge {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if b.Len() > 1<<20 {
			os.Stdout.WriteString(b.String())
			n += b.Len()
			b.Reset()
		}
	}
	os.Stdout.WriteString(b.String())
	finalResult(result("success", false, "flooded", 1, 0.5))
	os.Exit(0)
}
