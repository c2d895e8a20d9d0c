package headless

import (
	"encoding/json"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// FinalizedBy names what ended a turn.
type FinalizedBy string

const (
	// FinalizedByResult: the agent ended its turn (a final result: no live
	// background task, no turn still under way; Codex turn.completed or
	// turn.failed).
	FinalizedByResult FinalizedBy = "result"
	// FinalizedByStall: a tool call stayed open past its stall limit.
	FinalizedByStall FinalizedBy = "stall"
	// FinalizedByIdle: the stream was silent past the idle limit.
	FinalizedByIdle FinalizedBy = "idle"
	// FinalizedByBudget: the overall budget ran out.
	FinalizedByBudget FinalizedBy = "budget"
	// FinalizedByMaxBudget: the turn's spend crossed a ceiling (its own,
	// Spec.MaxCostUSD or MaxTokens, or one that Spec.OnSpend enforces).
	FinalizedByMaxBudget FinalizedBy = "max_budget"
	// FinalizedByAuth: an authentication failure showed on stderr or in the
	// stream.
	FinalizedByAuth FinalizedBy = "auth"
	// FinalizedByPermissionMode: the required permission mode did not take
	// effect.
	FinalizedByPermissionMode FinalizedBy = "permission_mode"
	// FinalizedByCancel: the caller cancelled the turn.
	FinalizedByCancel FinalizedBy = "cancel"
	// FinalizedByExit: the agent's process ended before its turn did.
	FinalizedByExit FinalizedBy = "exit"
	// FinalizedByBackground: the agent ended a segment while background
	// tasks were live, and they were still live after the background
	// timeout (Spec.BackgroundTimeout).
	FinalizedByBackground FinalizedBy = "background"
)

// Result is the account of one headless turn: how it ended and everything
// salvaged from the stream, whatever the outcome. It encodes to JSON with
// snake_case names (the CLI's --json output and what a service stores).
type Result struct {
	// Status is succeeded, failed or cancelled.
	Status corral.Status `json:"status"`
	// ErrorType classifies a failure (see Classify for the order in which
	// it is decided); empty on success.
	ErrorType corral.ErrorType `json:"error_type"`
	// Reason says in a sentence why the turn ended the way it did.
	Reason string `json:"reason,omitempty"`
	// ResetAt is when the provider said its limit resets, for a turn
	// ended by a rate limit or a usage limit whose words gave the time
	// ("resets 5pm", "try again in 2 hours", Claude Code's
	// "limit reached|UNIX-TIME"); nil when they gave none. A usage limit
	// with a reset time is a rate_limit, not a quota: waiting passes it.
	ResetAt *time.Time `json:"reset_at,omitempty"`
	// FinalizedBy names what ended the turn.
	FinalizedBy FinalizedBy `json:"finalized_by"`
	// Format is the stream format read (detected or given).
	Format Format `json:"format"`

	// Text is the final answer: the last result's text (Claude) or the last
	// completed agent message (Codex), or else the last text seen.
	Text          string `json:"result"`
	TextTruncated bool   `json:"result_truncated,omitempty"`
	// Subtype and IsError are the last result's (Claude), such as
	// "success", "error_max_turns".
	Subtype string `json:"result_subtype,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// AgentErrors holds the errors the agent reported (result errors[],
	// assistant error codes, Codex error messages), at most 20.
	AgentErrors []string `json:"agent_errors,omitempty"`

	SessionID      string `json:"session_id"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	// NumTurns is the agent's own count (Claude) or the turns completed
	// (Codex).
	NumTurns int `json:"num_turns"`
	// CostUSD is the turn's cost: the latest total_cost_usd the agent
	// reported (less what a resumed session had spent before, see
	// Spec.Before), else, when every model of the turn has a price, the
	// price table's estimate from its usage (CostEstimated; Codex reports
	// no cost); nil (JSON null) when it is not known.
	CostUSD       *float64 `json:"cost_usd"`
	CostEstimated bool     `json:"cost_estimated,omitempty"`
	// Spend is what the turn spent, as its ceilings counted it; SpendNote
	// says what it could not count (a model without a price).
	Spend     *Spend `json:"spend,omitempty"`
	SpendNote string `json:"spend_note,omitempty"`
	// Usage is the final usage (the latest result's, or Codex's
	// turn.completed); LastCallUsage the latest per-call usage, whose input
	// side is the current context size.
	Usage         *Usage          `json:"usage"`
	LastCallUsage *Usage          `json:"last_call_usage,omitempty"`
	ModelUsage    json.RawMessage `json:"model_usage,omitempty"`
	// Segments counts result lines (one per turn segment).
	Segments int `json:"segments"`

	// Tools is the tool-call timeline, in order of start, at most
	// DefaultMaxTools entries (ToolsDropped counts the rest).
	Tools        []ToolCall `json:"tools"`
	ToolsDropped int        `json:"tools_dropped,omitempty"`
	// StalledTool is the call that tripped the stall watchdog.
	StalledTool *ToolCall `json:"stalled_tool"`
	// BackgroundTasks are the background tasks still live when the turn
	// ended (the agent's result came while they ran, and the background
	// timeout fired, or the turn ended otherwise): they were stopped with
	// the tree.
	BackgroundTasks []BackgroundTask `json:"background_tasks,omitempty"`
	// APIFailure is the failed model API call the agent reported last and
	// had not yet recovered from when the turn ended: a call it was
	// retrying (rate limit, overload, server error) or an error it
	// reported. Nil when the API answered after it.
	APIFailure *APIFailure `json:"api_failure,omitempty"`

	// Events counts the events parsed; EventsDropped those a subscriber's
	// full channel did not take.
	Events        int64 `json:"events"`
	EventsDropped int64 `json:"events_dropped,omitempty"`
	// Lines and Bytes count the stream read up to the end of the turn.
	Lines int64 `json:"lines"`
	Bytes int64 `json:"bytes"`
	// ParseErrors counts lines that could not be read (not JSON, malformed);
	// ParseErrorSample shows the first, bounded.
	ParseErrors      int64  `json:"parse_errors"`
	ParseErrorSample string `json:"parse_error_sample,omitempty"`
	// LinesCut counts lines longer than Spec.MaxLine; BytesCut the bytes
	// dropped from them.
	LinesCut int64 `json:"lines_cut,omitempty"`
	BytesCut int64 `json:"bytes_cut,omitempty"`

	// ExitCode is the agent's exit status, or -1 when it had not exited
	// (by itself) when the turn ended or a signal ended it. Signal names
	// that signal.
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// StderrTail is the end of the agent's stderr, secrets redacted.
	StderrTail string `json:"stderr_tail,omitempty"`

	// Finalize says how soon corral ended a turn the agent ended
	// (finalized_by result), by corral's own clock; nil otherwise.
	Finalize *Finalization `json:"finalize,omitempty"`

	// Start is when the agent was spawned; Duration runs from there to the
	// end of the turn (not of the teardown).
	Start      time.Time     `json:"start"`
	Duration   time.Duration `json:"-"`
	DurationMS float64       `json:"duration_ms"`

	// TranscriptPath names the transcript file, if one was asked for.
	TranscriptPath      string `json:"transcript_path,omitempty"`
	TranscriptTruncated bool   `json:"transcript_truncated,omitempty"`

	// Process describes the supervised process once its tree is gone: it
	// is set in the Result that Close returns, and in the one Wait returns
	// only when the process had already ended when the turn did.
	Process *ProcessInfo `json:"process,omitempty"`
	// Proc is the core's own result, when the tree is gone.
	Proc *proc.Result `json:"-"`

	// Teardown is closed when the agent's tree is gone and the turn's
	// goroutines have ended (the same as Turn.TornDown).
	Teardown <-chan struct{} `json:"-"`
}

// Usage counts tokens, as the agent reported them. Claude reports input,
// output and its two cache fields (cache creation, cache read); Codex
// reports input, cached input, cache write, output and reasoning output.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CachedInputTokens        int64 `json:"cached_input_tokens,omitempty"`
	CacheWriteInputTokens    int64 `json:"cache_write_input_tokens,omitempty"`
	ReasoningOutputTokens    int64 `json:"reasoning_output_tokens,omitempty"`
}

// ToolCall is one tool call of the timeline (see Timeline).
type ToolCall struct {
	ID string `json:"id"`
	// Name is the tool's name as the agent gave it ("Bash",
	// "mcp__github__create_issue"; for Codex "command_execution",
	// "file_change", "web_search" or "mcp__SERVER__TOOL").
	Name string `json:"name"`
	// Detail is a short account of the call's input (see Event.Detail).
	Detail string `json:"detail,omitempty"`
	// ParentID is the tool call of the subagent that made this one.
	ParentID string    `json:"parent_id,omitempty"`
	Start    time.Time `json:"start"`
	// DurationMS is how long the call was open (until now, if still open).
	DurationMS float64 `json:"duration_ms"`
	// Open reports that no result came back for it.
	Open bool `json:"open,omitempty"`
	// Error reports that its result was an error (is_error, a failed or
	// declined Codex item, a non-zero exit code); ErrorText is the start
	// of what it said, at most MaxDetail bytes.
	Error     bool   `json:"error,omitempty"`
	ErrorText string `json:"error_text,omitempty"`
	// StallLimitMS is the call's stall limit; 0 means none.
	StallLimitMS float64 `json:"stall_limit_ms,omitempty"`
}

// BackgroundTask is a live background task of the agent, as Claude Code's
// background_tasks_changed lists it.
type BackgroundTask struct {
	ID string `json:"id"`
	// Type is the task's kind: local_bash (a shell command run in the
	// background), local_agent (a sub-agent), local_workflow, mcp_task, …
	Type        string `json:"type,omitempty"`
	Description string `json:"description,omitempty"`
}

// APIFailure is a failed call of the agent to its model API.
type APIFailure struct {
	// ErrorType is what the failure means in corral's taxonomy: auth,
	// rate_limit (throttled or overloaded), quota, model_unsupported, or
	// stream_error for other failures (server errors, broken streams).
	ErrorType corral.ErrorType `json:"error_type"`
	// Error is the agent's code ("rate_limit", "overloaded") or message.
	Error string `json:"error"`
	// Status is the HTTP status, when the agent reported it.
	Status int `json:"status,omitempty"`
	// Attempt and MaxAttempts count the agent's tries, when it reported
	// them; zero for an error it did not retry.
	Attempt     int `json:"attempt,omitempty"`
	MaxAttempts int `json:"max_attempts,omitempty"`
}

// ProcessInfo is the part of the core's result worth storing.
type ProcessInfo struct {
	Pid             int                `json:"pid"`
	ExitCode        int                `json:"exit_code"`
	Signal          string             `json:"signal,omitempty"`
	Containment     corral.Containment `json:"containment"`
	ContainmentNote string             `json:"containment_note,omitempty"`
	Killed          int                `json:"killed"`
	Survivors       int                `json:"survivors"`
	// Sandbox says what confined the agent; nil when it ran unconfined.
	Sandbox *corral.SandboxReport `json:"sandbox,omitempty"`
	// TeardownMS runs from the end of the turn to the tree being gone.
	TeardownMS float64 `json:"teardown_ms"`
}

// Succeeded reports whether the turn succeeded.
func (r *Result) Succeeded() bool { return r.Status == corral.StatusSucceeded }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
