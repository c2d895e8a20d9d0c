package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/cliflag"
)

func init() {
	register("headless", headlessMain)
}

const headlessUsage = `Usage: corral headless [flags] -- AGENT_CMD [ARGS...]

Runs one headless coding-agent turn under corral's supervision and reads its
stream as it arrives: Claude Code's "claude -p --output-format stream-json
--verbose" or Codex's "codex exec --json" (detected, or set with --format).

The turn is over when the agent says so: a result line while no background
task is live (Codex: turn.completed or turn.failed). corral then answers at
once, even if the agent or one of its MCP servers keeps the pipe open, and
tears the process tree down behind it. Backstops: a tool call open past its
stall limit (MCP tools by default), no output past the idle limit while no
tool call is open, and the overall budget. A result while background tasks
are live (a sub-agent, a shell command run in the background) is only a
segment: the turn waits for them, at most --background-timeout after the
latest segment. An authentication failure (on stderr, in the stream, or a
model API answering 401 while the agent retries), or a permission mode that
did not take effect, stops the turn at once. When a watchdog ends a turn
while the agent was retrying a failing model API, the error type is that
failure's (rate_limit, quota, ...), not the watchdog's. SIGINT or SIGTERM to
corral cancels the turn: the agent gets SIGINT first, then the tree is torn
down.

Without --json a live view shows the turn: messages, tool calls as they
start and finish, the final answer and a one-line summary. With --json one
object is printed at the end: status (succeeded, failed, cancelled),
error_type (empty on success), finalized_by, result, session_id, num_turns,
cost_usd (null when the agent reported none), usage, exit_code,
duration_ms, stalled_tool, background_tasks, api_failure, parse_errors,
events, tools (and a few more).

Under --sandbox the agent and everything it runs are confined; give it its
model API host with --allow-host and its state directories with --writable
(docs/headless.md has recipes for Claude Code and Codex).

Example:
  corral headless --timeout 30m --require-permission-mode bypassPermissions \
    --transcript turn.jsonl -- claude -p --output-format stream-json \
    --verbose --permission-mode bypassPermissions "Fix the failing test"

Exit status: 0 when the turn succeeded; 1 when it failed (see error_type);
124 when its budget ran out; 125 when corral itself fails, a flag is wrong,
or the sandbox asked for cannot be built; 126 when the agent is not
executable; 127 when it is not found; 130 or 143 when corral got SIGINT or
SIGTERM.

Flags:
`

func headlessMain(args []string) int {
	return headlessCmd(args, os.Stdout, os.Stderr)
}

// headlessFlags are corral headless's flags.
type headlessFlags struct {
	fs                                      *flag.FlagSet
	timeout, stall, idle, background, yield *time.Duration
	linger, interrupt                       *time.Duration
	grace                                   func() time.Duration
	format, perm, transcript, containment   *string
	asJSON                                  *bool
	toolLimits, setEnv                      cliflag.StringList
	sbf                                     *cliflag.Sandbox
	spf                                     *spendFlags
	tf                                      *cliflag.Telemetry
	flushWindow                             *time.Duration
}

func newHeadlessFlags(stderr io.Writer) *headlessFlags {
	fs := flag.NewFlagSet("headless", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, headlessUsage)
		fs.PrintDefaults()
		fmt.Fprint(stderr, cliflag.SandboxHelp+cliflag.TelemetryHelp)
	}
	f := &headlessFlags{
		fs:          fs,
		timeout:     cliflag.NonNegDuration(fs, "timeout", 0, "budget of the whole turn (0: none)"),
		stall:       cliflag.NonNegDuration(fs, "stall-timeout", headless.DefaultStallTimeout, "stall limit of MCP tool calls (mcp__*); 0: none"),
		idle:        cliflag.NonNegDuration(fs, "idle-timeout", headless.DefaultIdleTimeout, "fail when the agent writes nothing for `DUR` while no tool call is open; 0: never"),
		background:  cliflag.NonNegDuration(fs, "background-timeout", headless.DefaultBackgroundTimeout, "after a result while background tasks are live, wait at most `DUR` for them; 0: as long as the budget allows"),
		yield:       cliflag.NonNegDuration(fs, "command-yield", headless.DefaultCommandYield, "an open Codex command holds off the idle limit for `DUR` after its start (Codex yields it back to the model by then); 0: for as long as it runs"),
		grace:       cliflag.Grace(fs, "when the tree is torn down"),
		linger:      cliflag.NonNegDuration(fs, "linger", headless.DefaultLinger, "time (`DUR`) the agent may take to exit by itself after its turn"),
		interrupt:   cliflag.NonNegDuration(fs, "interrupt-grace", headless.DefaultInterruptGrace, "on cancellation, time (`DUR`) between SIGINT to the agent and the teardown"),
		format:      fs.String("format", "auto", "stream format: claude, codex or auto"),
		perm:        fs.String("require-permission-mode", "", "fail at once unless the agent's init line reports permission mode `MODE`"),
		transcript:  fs.String("transcript", "", "write the agent's stream to `FILE`, secrets redacted"),
		containment: fs.String("containment", "auto", "containment tier: auto, cgroup, subreaper or pgroup"),
		asJSON:      fs.Bool("json", false, "print one JSON object with the result instead of the live view"),
	}
	fs.Var(&f.toolLimits, "tool-timeout", "stall limit of a tool, `NAME=DUR`; NAME may be a glob (mcp__github__*); 0 exempts it (repeatable)")
	fs.Var(&f.setEnv, "setenv", "add `KEY=VALUE` to the agent's environment (repeatable)")
	f.sbf = cliflag.AddSandbox(fs, "workdir")
	f.spf = addSpendFlags(fs)
	f.tf = cliflag.AddTelemetry(fs)
	f.flushWindow = fs.Duration("otel-flush-window", headless.DefaultFlushWindow, "with telemetry on, time the agent may take after its turn to flush its own telemetry and exit (0: none)")
	return f
}

// headlessCmd is corral headless with its output streams given.
func headlessCmd(args []string, stdout, stderr io.Writer) int {
	f := newHeadlessFlags(stderr)
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return cliflag.ExitCorralFailed
	}
	if f.fs.NArg() == 0 {
		fmt.Fprintln(stderr, "corral headless: no agent command given (corral headless [flags] -- AGENT_CMD [ARGS...])")
		return cliflag.ExitCorralFailed
	}
	spec, err := f.spec()
	if err != nil {
		fmt.Fprintln(stderr, "corral headless:", err)
		return cliflag.ExitCorralFailed
	}
	var view *headlessView
	if !*f.asJSON {
		view = newHeadlessView(stdout)
		spec.OnEvent = view.event
	}
	ctx := f.tf.Start("headless", cliflag.Version())
	spec.Env = append(spec.Env, f.tf.Env()...)
	spec.FlushWindow = cliflag.NegIfZero(*f.flushWindow)
	return runHeadlessTurn(ctx, spec, view, *f.asJSON, stdout, stderr)
}

// spec builds the turn's Spec from the flags.
func (f *headlessFlags) spec() (*headless.Spec, error) {
	spec := &headless.Spec{
		Args:                  f.fs.Args(),
		Env:                   f.setEnv,
		Timeout:               *f.timeout,
		StallTimeout:          cliflag.NegIfZero(*f.stall),
		IdleTimeout:           cliflag.NegIfZero(*f.idle),
		BackgroundTimeout:     cliflag.NegIfZero(*f.background),
		CommandYield:          cliflag.NegIfZero(*f.yield),
		Grace:                 f.grace(),
		Linger:                cliflag.NegIfZero(*f.linger),
		InterruptGrace:        cliflag.NegIfZero(*f.interrupt),
		RequirePermissionMode: *f.perm,
		TranscriptPath:        *f.transcript,
		Label:                 "headless",
	}
	if err := f.spf.apply(spec); err != nil {
		return nil, err
	}
	var err error
	if spec.Format, err = headless.ParseFormat(*f.format); err != nil {
		return nil, err
	}
	if spec.Containment, err = corral.ParseContainment(*f.containment); err != nil {
		return nil, err
	}
	if spec.Dir, err = f.sbf.Dir(); err != nil {
		return nil, err
	}
	if spec.Sandbox, err = f.sbf.Settings(); err != nil {
		return nil, err
	}
	for _, s := range f.toolLimits {
		l, err := headless.ParseToolLimit(s)
		if err != nil {
			return nil, fmt.Errorf("--tool-timeout: %w", err)
		}
		spec.ToolLimits = append(spec.ToolLimits, l)
	}
	return spec, nil
}

// runHeadlessTurn runs one turn, says its result, and returns the exit
// status once the agent's tree is gone. SIGINT, SIGTERM and SIGHUP cancel
// the turn; SIGTSTP is dropped: stopping corral alone would stop the
// turn's watchdogs while the agent, in a session of its own, runs on.
func runHeadlessTurn(ctx context.Context, spec *headless.Spec, view *headlessView, asJSON bool, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, append(cliflag.StopSignals, holdSignals...)...)
	defer signal.Stop(sigs)
	turn, err := headless.Start(ctx, spec)
	if err != nil {
		if view != nil {
			view.stop()
		}
		fmt.Fprintln(stderr, "corral headless:", err)
		return cliflag.StartFailure(err)
	}
	got := waitTurn(turn, sigs)
	r, _ := turn.Wait()
	if view != nil {
		view.end(r)
	}
	// Exit only when the tree is gone: nothing of the turn may outlive
	// corral. The answer above was printed at the end of the turn.
	final, werr := turn.Close()
	if werr != nil {
		fmt.Fprintln(stderr, "corral headless:", werr)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(final); err != nil {
			fmt.Fprintln(stderr, "corral headless:", err)
			return cliflag.ExitCorralFailed
		}
	}
	if final.Process != nil && final.Process.Survivors > 0 {
		fmt.Fprintf(stderr, "corral headless: %d processes of the agent's tree survived SIGKILL (stuck in the kernel?)\n", final.Process.Survivors)
	}
	return headlessExit(final, got)
}

// waitTurn waits for the turn's end, or for a stop signal, which cancels
// it and is returned.
func waitTurn(turn *headless.Turn, sigs <-chan os.Signal) os.Signal {
	for {
		select {
		case got := <-sigs:
			if isHoldSignal(got) {
				continue
			}
			turn.Cancel()
			return got
		case <-turn.Done():
			return nil
		}
	}
}

// headlessExit maps a turn's result to the exit status.
func headlessExit(r *headless.Result, got os.Signal) int {
	switch {
	case got != nil:
		if s, ok := got.(syscall.Signal); ok {
			return 128 + int(s)
		}
		return 130
	case r.Status == corral.StatusSucceeded:
		return 0
	case r.ErrorType == corral.ErrorTimeout:
		return cliflag.ExitTimedOut
	}
	return 1
}

// headlessView prints a readable live view of a turn. Events arrive on the
// stream's goroutine and are printed by a goroutine of the view, through a
// bounded queue, so that a slow terminal never stalls the stream.
type headlessView struct {
	w       io.Writer
	q       chan headless.Event
	done    chan struct{}
	dropped int
	mu      sync.Mutex
	// Owned by the printing goroutine.
	tools    map[string]headlessTool
	lastText string
}

type headlessTool struct {
	name  string
	start time.Time
}

func newHeadlessView(w io.Writer) *headlessView {
	v := &headlessView{w: w, q: make(chan headless.Event, 1024), done: make(chan struct{}), tools: map[string]headlessTool{}}
	go v.print()
	return v
}

func (v *headlessView) event(e headless.Event) {
	select {
	case v.q <- e:
	default:
		v.mu.Lock()
		v.dropped++
		v.mu.Unlock()
	}
}

func (v *headlessView) print() {
	defer close(v.done)
	for e := range v.q {
		v.line(e)
	}
}

func (v *headlessView) line(e headless.Event) {
	switch e.Kind {
	case headless.KindInit:
		var parts []string
		for _, s := range []string{e.SessionID, e.Model, e.PermissionMode} {
			if s != "" {
				parts = append(parts, s)
			}
		}
		fmt.Fprintf(v.w, "● session %s\n", strings.Join(parts, " · "))
	case headless.KindText:
		v.lastText = e.Text
		fmt.Fprintf(v.w, "%s\n", headlessIndent(e.Text))
	case headless.KindToolUse:
		v.tools[e.ToolID] = headlessTool{e.ToolName, e.Time}
		sub := ""
		if e.ParentToolID != "" {
			sub = " (subagent)"
		}
		fmt.Fprintf(v.w, "→ %s %s%s\n", e.ToolName, e.ToolID, sub)
	case headless.KindToolResult:
		t, ok := v.tools[e.ToolID]
		delete(v.tools, e.ToolID)
		name := e.ToolName
		if name == "" {
			name = t.name
		}
		mark, d := "✓", ""
		if e.IsError {
			mark = "✗"
		}
		if ok {
			d = " " + e.Time.Sub(t.start).Round(time.Millisecond).String()
		}
		fmt.Fprintf(v.w, "%s %s %s%s\n", mark, name, e.ToolID, d)
	case headless.KindTask:
		fmt.Fprintf(v.w, "  task %s %s %s\n", e.TaskID, e.TaskStatus, headlessOneLine(e.Text, 100))
	case headless.KindBackground:
		fmt.Fprintf(v.w, "  background tasks live: %d\n", e.Background)
	case headless.KindResult:
		if !e.Final {
			fmt.Fprintf(v.w, "… result while background tasks are live: waiting for the final one\n")
		}
	case headless.KindError:
		fmt.Fprintf(v.w, "! agent error: %s\n", e.Error)
	case headless.KindRetry:
		try := ""
		if e.Attempt > 0 {
			try = fmt.Sprintf(" (try %d", e.Attempt)
			if e.MaxAttempts > 0 {
				try += fmt.Sprintf(" of %d", e.MaxAttempts)
			}
			try += ")"
		}
		status := ""
		if e.ErrorStatus != 0 {
			status = fmt.Sprintf("%d ", e.ErrorStatus)
		}
		fmt.Fprintf(v.w, "! model API failed: %s%s%s, retrying\n", status, headlessOneLine(e.Error, 200), try)
	}
}

// stop ends the printing goroutine; called once, when no event can come.
func (v *headlessView) stop() {
	close(v.q)
	<-v.done
}

// end prints the final answer and the summary; called once, after the end
// of the turn (no event comes after it).
func (v *headlessView) end(r *headless.Result) {
	v.stop()
	if r.Text != "" && r.Text != v.lastText {
		fmt.Fprintf(v.w, "\n%s\n", r.Text)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s", r.Status)
	if r.ErrorType != "" {
		fmt.Fprintf(&b, " (%s)", r.ErrorType)
	}
	cost := "—" // the agent reported none
	if r.CostUSD != nil {
		cost = fmt.Sprintf("$%.4f", *r.CostUSD)
	}
	fmt.Fprintf(&b, " · by %s · %d turns · %s · %s", r.FinalizedBy, r.NumTurns, cost, r.Duration.Round(time.Millisecond))
	if r.SessionID != "" {
		fmt.Fprintf(&b, " · session %s", r.SessionID)
	}
	if r.ParseErrors > 0 {
		fmt.Fprintf(&b, " · %d unreadable lines", r.ParseErrors)
	}
	v.mu.Lock()
	dropped := v.dropped
	v.mu.Unlock()
	if dropped > 0 {
		fmt.Fprintf(&b, " · %d events not shown", dropped)
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, "\n%s", r.Reason)
	}
	fmt.Fprintln(v.w, b.String())
}

func headlessIndent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

func headlessOneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}
