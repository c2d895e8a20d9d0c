package headless

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/proc"
)

// Defaults applied to the zero values of a Spec.
const (
	// DefaultStallTimeout is how long an MCP tool call (a tool named
	// "mcp__*") may stay open without its result.
	DefaultStallTimeout = 30 * time.Minute

	// DefaultIdleTimeout is how long the stream may stay silent while no
	// tool call and no background task is open.
	DefaultIdleTimeout = 10 * time.Minute

	// DefaultBackgroundTimeout is how long a turn waits for the agent's
	// background tasks after a result that left them live.
	DefaultBackgroundTimeout = 10 * time.Minute

	// DefaultCommandYield is how long an open Codex command holds off the
	// idle watchdog: Codex hands a command still running back to the model
	// after its yield time, at most 30 s.
	DefaultCommandYield = 30 * time.Second

	// DefaultLinger is how long an agent may take to exit by itself after
	// the end of its turn before its tree is stopped.
	DefaultLinger = time.Second

	// DefaultInterruptGrace is how long a cancelled agent has between
	// SIGINT and the core's SIGTERM → grace → SIGKILL escalation.
	DefaultInterruptGrace = 3 * time.Second

	// DefaultMaxLine bounds one stream line; longer lines are cut, read up
	// to the cut, and counted.
	DefaultMaxLine = 8 << 20

	// DefaultMaxEventRaw bounds the raw line kept in an Event.
	DefaultMaxEventRaw = 4 << 10

	// DefaultMaxEventText bounds the text carried by an Event.
	DefaultMaxEventText = 16 << 10

	// DefaultMaxTranscript bounds the transcript file.
	DefaultMaxTranscript = 64 << 20

	// DefaultMaxTools bounds the tool timeline kept in a Result.
	DefaultMaxTools = 1000
)

// Format names an agent's stream format.
type Format string

const (
	// FormatAuto (the zero value) detects the format from the first lines
	// whose type only one format uses.
	FormatAuto Format = ""
	// FormatClaude is Claude Code's `--output-format stream-json`.
	FormatClaude Format = "claude"
	// FormatCodex is Codex's `exec --json`.
	FormatCodex Format = "codex"
)

// String returns the format's name; the zero value prints as "auto".
func (f Format) String() string {
	if f == FormatAuto {
		return "auto"
	}
	return string(f)
}

// ParseFormat parses "claude", "codex" or "auto".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "auto", "":
		return FormatAuto, nil
	case "claude":
		return FormatClaude, nil
	case "codex":
		return FormatCodex, nil
	}
	return "", fmt.Errorf("unknown stream format %q: want claude, codex or auto", s)
}

// ToolLimit sets the stall limit of the tools whose name matches Tool: an
// exact name ("Bash", "mcp__github__create_issue") or a glob in the syntax
// of path.Match ("mcp__slow__*"). A Timeout of zero or less exempts those
// tools from the stall watchdog.
//
// Codex items are named by their type ("command_execution", "file_change",
// "web_search"), and its MCP calls as "mcp__SERVER__TOOL", so that the same
// limits apply to both formats.
type ToolLimit struct {
	Tool    string        `json:"tool"`
	Timeout time.Duration `json:"timeout"`
}

// ParseToolLimit parses "NAME=DURATION", as the CLI's --tool-timeout takes.
func ParseToolLimit(s string) (ToolLimit, error) {
	name, dur, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return ToolLimit{}, fmt.Errorf("tool limit %q: want NAME=DURATION, such as mcp__github__*=10m or Bash=2h", s)
	}
	d, err := time.ParseDuration(dur)
	if err != nil {
		return ToolLimit{}, fmt.Errorf("tool limit %q: %w", s, err)
	}
	if _, err := path.Match(name, ""); err != nil {
		return ToolLimit{}, fmt.Errorf("tool limit %q: bad glob: %w", s, err)
	}
	return ToolLimit{Tool: name, Timeout: d}, nil
}

// Spec describes one headless agent turn. The zero value of each field means
// something sensible, documented with the field; only Args is required.
type Spec struct {
	// Args is the agent's command line, such as
	// {"claude", "-p", "--output-format", "stream-json", "--verbose", "PROMPT"}
	// or {"codex", "exec", "--json", "PROMPT"}. Args[0] is looked up in PATH
	// when it has no slash.
	Args []string

	// Dir is the agent's working directory; empty means the supervisor's.
	Dir string

	// EnvMode, EnvAllow and Env give the agent's environment, as in
	// proc.Spec. Values of variables in Env whose names look secret
	// (ending in TOKEN, SECRET, PASSWORD, API_KEY, ACCESS_KEY and the
	// like) are redacted from the transcript, the tool details and the
	// stderr tail, besides private keys and credentials of known shapes.
	EnvMode  corral.EnvMode
	EnvAllow []string
	Env      []string

	// Stdin is the agent's standard input (a prompt, say). Nil means the
	// null device, which Codex needs to not wait for input.
	Stdin io.Reader

	// Format is the stream format; FormatAuto detects it.
	Format Format

	// Timeout is the budget of the whole turn, from Start: when it runs
	// out, the turn fails with ErrorTimeout whatever the agent is doing.
	// Zero means no budget.
	Timeout time.Duration

	// StallTimeout is the stall limit of MCP tool calls (tools named
	// "mcp__*"): a call open that long without its result fails the turn
	// with ErrorStall. Other tools have no stall limit unless ToolLimits
	// gives one. Zero means DefaultStallTimeout; negative means none.
	StallTimeout time.Duration

	// ToolLimits override the stall limit per tool, by name or glob. The
	// first exact name that matches wins, then the first glob, then the
	// MCP default.
	ToolLimits []ToolLimit

	// IdleTimeout fails the turn with ErrorIdle when the agent writes
	// nothing to its stream for that long while no tool call is open and no
	// background task is live: a long tool call is governed by its stall
	// limit and the budget, never by idleness. Zero means
	// DefaultIdleTimeout; negative means none.
	IdleTimeout time.Duration

	// BackgroundTimeout bounds the wait for background tasks. A result
	// while tasks are live (a sub-agent, a workflow, a shell command
	// Claude Code ran in the background) is a segment: Claude Code waits
	// for them and answers again when they finish. If they are still live
	// BackgroundTimeout after the latest segment, the turn ends
	// (FinalizedByBackground), the tasks are listed in
	// Result.BackgroundTasks and stopped with the tree: a dev server left
	// running does not hold the turn forever. Only shell commands live →
	// the outcome is the last result's; other tasks live → timeout. Zero
	// means DefaultBackgroundTimeout; negative means wait for as long as
	// the budget allows.
	BackgroundTimeout time.Duration

	// CommandYield is how long an open Codex command holds off the idle
	// watchdog. Codex hands a command that is still running back to the
	// model after its yield time (yield_time_ms: 10 s by default, at most
	// 30 s) while the command's item stays open until its process exits —
	// for a dev server, never. Past CommandYield after its start a command
	// counts as yielded, and silence counts toward the idle limit from
	// then on. Zero means DefaultCommandYield; negative means an open
	// command holds off the idle watchdog for as long as it is open.
	CommandYield time.Duration

	// Grace is the core's time between SIGTERM and SIGKILL when the tree
	// is torn down. Zero means proc.DefaultGrace; negative means SIGKILL at
	// once.
	Grace time.Duration

	// Linger is how long the agent may take to exit by itself after the
	// end of its turn before its tree is stopped. The caller never waits
	// for it: the Result is returned at the end of the turn. Zero means
	// DefaultLinger; negative means stop at once.
	Linger time.Duration

	// FlushWindow is how long a traced agent may take to exit by itself
	// after it ended its turn, when that is longer than Linger: an agent
	// that exports its own telemetry (it got TRACEPARENT) flushes its
	// exporter on the way out, and a SIGTERM before that loses its spans.
	// It applies only when the turn's span is recorded (a TracerProvider
	// started it and sampled the turn, see proc.SetTracerProvider);
	// without telemetry the teardown is as Linger says. The caller never
	// waits for it: the Result is returned at the end of the turn; Close
	// and TornDown come at most max(Linger, FlushWindow) + grace + drain
	// after it. Zero means DefaultFlushWindow; negative means none.
	FlushWindow time.Duration

	// InterruptGrace is how long a cancelled agent has, after SIGINT to its
	// main process, to finish its current step and exit before the tree is
	// torn down. Zero means DefaultInterruptGrace; negative means no SIGINT.
	InterruptGrace time.Duration

	// RequirePermissionMode, when set, is the permission mode the agent
	// must report in its init line (such as "bypassPermissions"). If it
	// reports another, or acts before reporting one, the turn fails at
	// once with ErrorPermissionMode. Codex streams do not report one, so
	// a Codex turn with this set fails the same way.
	RequirePermissionMode string

	// TranscriptPath, when set, names a file (created with mode 0600,
	// truncated) that receives the agent's stream line by line, secrets
	// redacted, up to MaxTranscript bytes.
	TranscriptPath string

	// MaxTranscript bounds the transcript. Zero means DefaultMaxTranscript.
	MaxTranscript int64

	// MaxLine bounds one stream line: a longer line is cut, read up to the
	// cut (which keeps its type and leading fields), and counted in
	// Result.LinesCut. Zero means DefaultMaxLine.
	MaxLine int

	// MaxEventRaw and MaxEventText bound the raw line and the text carried
	// by each Event. Zero means the defaults; negative keeps none.
	MaxEventRaw  int
	MaxEventText int

	// MaxOutput caps the bytes the core keeps of each stream (head and
	// tail), as in proc.Spec; the stderr tail of the Result comes from it.
	// Zero means proc.DefaultMaxOutput.
	MaxOutput int

	// Containment overrides the containment tier; the default picks the
	// strongest available.
	Containment corral.Containment

	// Limits caps the tree's processes and memory, as in proc.Spec.
	Limits proc.Limits

	// Credential, if set, runs the agent as another user, as in
	// proc.Spec.
	Credential *proc.Credential

	// Sandbox confines the agent and everything it runs, as in
	// proc.Spec.Sandbox: the zero value runs it unconfined; Dir is the
	// workspace. An agent needs its model API host in Sandbox.AllowHosts
	// and its own state directories (~/.claude, $CODEX_HOME) in
	// Sandbox.Writable. When the confinement asked for cannot be built,
	// Start fails with an error wrapping proc.ErrSandboxUnavailable and
	// nothing runs.
	Sandbox corral.Sandbox

	// Guard, if set, keeps the agent and everything it runs from the
	// caller's secrets, as in proc.Spec.Guard. When it cannot be built,
	// Start fails with an error wrapping proc.ErrGuardUnavailable and
	// nothing runs.
	Guard *proc.Guard

	// OnStart, if set, is called once, right after the agent is spawned and
	// before Start returns, with the handle a service records to reclaim
	// the tree after a crash.
	OnStart func(proc.Handle)

	// MaxCostUSD and MaxTokens are the turn's spending ceilings (zero:
	// none). After every event that carries usage the turn's Spend is
	// counted, and the turn ends at once, as error type max_budget, when
	// it crosses one: its cost over MaxCostUSD (the agent's own figure
	// when it reports one, else the Prices' estimate from its usage), or
	// its tokens over MaxTokens. A model without a price makes the cost
	// ceiling a floor, said in Result.SpendNote; the token ceiling holds.
	MaxCostUSD float64
	MaxTokens  int64
	// Prices prices the models when the agent reports no cost (Codex, and
	// Claude Code until its result); nil means DefaultPrices.
	Prices *Prices
	// Before is what the session had spent before this turn, when the
	// turn resumes one: a resumed CLI reports its cost (Claude Code) or
	// its tokens (Codex) counted from the session's start, and the turn's
	// own share is what it reports less Before.
	Before *Spend
	// OnSpend, if set, is called after each event that changed the
	// turn's Spend, from the stream's goroutine, with the spend so far. An
	// error it returns ends the turn as max_budget, its text the reason
	// (the service ends a run this way when its agent's budget window is
	// spent).
	OnSpend func(Spend) error

	// OnEvent, if set, is called with each event in stream order, from the
	// goroutine reading the stream, up to and including the event that ends
	// the turn and never after Wait has returned. It must return quickly
	// (a slow callback stalls the stream) and must not call the Turn's
	// methods that wait.
	OnEvent func(Event)

	// Label names the run where people read it, such as its cgroup.
	Label string
}

func (s *Spec) validate() error {
	if s == nil || len(s.Args) == 0 {
		return errors.New("headless: spec has no agent command (Args is empty)")
	}
	if s.Args[0] == "" {
		return errors.New("headless: agent command is empty")
	}
	switch s.Format {
	case FormatAuto, FormatClaude, FormatCodex:
	default:
		return fmt.Errorf("headless: unknown stream format %q: want claude, codex or auto", s.Format)
	}
	for _, l := range s.ToolLimits {
		if l.Tool == "" {
			return errors.New("headless: a tool limit has no tool name")
		}
		if _, err := path.Match(l.Tool, ""); err != nil {
			return fmt.Errorf("headless: tool limit %q: bad glob: %w", l.Tool, err)
		}
	}
	if s.Format == FormatCodex && s.RequirePermissionMode != "" {
		return errors.New("headless: codex streams do not report a permission mode: unset RequirePermissionMode or use the claude format")
	}
	return nil
}

// StallLimit returns the stall limit the spec gives a tool, by its name:
// the first exact match of ToolLimits, else the first glob that matches,
// else StallTimeout (or DefaultStallTimeout) for MCP tools ("mcp__*");
// 0 means none.
func (s *Spec) StallLimit(name string) time.Duration {
	for _, l := range s.ToolLimits {
		if l.Tool == name {
			return max(l.Timeout, 0)
		}
	}
	for _, l := range s.ToolLimits {
		if ok, _ := path.Match(l.Tool, name); ok {
			return max(l.Timeout, 0)
		}
	}
	if strings.HasPrefix(name, "mcp__") {
		return setting.Or(s.StallTimeout, DefaultStallTimeout)
	}
	return 0
}
