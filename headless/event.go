package headless

import "time"

// Kind is what an Event is about, the same for both stream formats.
type Kind string

const (
	// KindInit: the session began (Claude's system/init, Codex's
	// thread.started). SessionID, Model and PermissionMode are set when the
	// agent reported them.
	KindInit Kind = "init"
	// KindTurnStarted: Codex began a turn.
	KindTurnStarted Kind = "turn_started"
	// KindText: a piece of the agent's answer (Text).
	KindText Kind = "text"
	// KindThinking: the agent's reasoning (Text).
	KindThinking Kind = "thinking"
	// KindToolUse: a tool call opened (ToolID, ToolName, ParentToolID,
	// Detail).
	KindToolUse Kind = "tool_use"
	// KindToolResult: a tool call closed (ToolID, IsError; ToolName and
	// Detail for Codex items; Text for a failed call).
	KindToolResult Kind = "tool_result"
	// KindTask: a background task started, progressed or settled (TaskID,
	// TaskStatus, Text).
	KindTask Kind = "task"
	// KindBackground: the live background-task set changed; Background is
	// its new size (ambient tasks excluded).
	KindBackground Kind = "background"
	// KindResult: the agent ended a turn segment (Claude's result, Codex's
	// turn.completed or turn.failed), with its Text and Errors. Final
	// reports that it ended the turn; a result while background tasks are
	// live is only a segment.
	KindResult Kind = "result"
	// KindError: the agent reported an error (Error) without ending the
	// turn.
	KindError Kind = "error"
	// KindRetry: the agent's call to its model API failed and it will try
	// again (Claude's system/api_retry, Codex's "Reconnecting... N/M"
	// error lines): Error is the agent's code or message, ErrorStatus the
	// HTTP status when reported, Attempt and MaxAttempts the retry count,
	// RetryDelayMS how long it waits before the next try when it said so.
	KindRetry Kind = "retry"
	// KindSystem: housekeeping the turn does not act on (hooks, status,
	// compaction, progress of an item).
	KindSystem Kind = "system"
	// KindUnknown: a JSON line of a type this package does not know.
	KindUnknown Kind = "unknown"
	// KindInvalid: a line that is not a JSON object (Error says why). It is
	// counted in Result.ParseErrors.
	KindInvalid Kind = "invalid"
)

// Event is one thing the agent said, in a shape common to both formats.
// Fields that do not apply to its Kind are empty. Text and Raw are bounded
// (Spec.MaxEventText, Spec.MaxEventRaw); TextTruncated and RawTruncated say
// when something was cut. Detail, Error and each of Errors are bounded too
// (MaxDetail, 1 KiB).
type Event struct {
	Seq  int64     `json:"seq"`  // 1, 2, … in stream order
	Line int64     `json:"line"` // stream line it came from, from 1
	Time time.Time `json:"time"` // when it was read
	Kind Kind      `json:"kind"`

	// Type and Subtype are the line's own, as the agent wrote them.
	Type    string `json:"type,omitempty"`
	Subtype string `json:"subtype,omitempty"`

	// Text is the agent's words (KindText, KindThinking), a result's text,
	// a task's summary, or for a failed tool call (KindToolResult with
	// IsError) the start of what it returned.
	Text          string `json:"text,omitempty"`
	TextTruncated bool   `json:"text_truncated,omitempty"`

	SessionID      string `json:"session_id,omitempty"`
	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`

	ToolID       string `json:"tool_id,omitempty"`
	ToolName     string `json:"tool_name,omitempty"`
	ParentToolID string `json:"parent_tool_id,omitempty"`
	// Detail is a short account of a tool call's input: its command, file
	// path, pattern, URL or query, or else its input JSON with white space
	// collapsed; at most MaxDetail bytes, a cut marked with "…".
	Detail  string `json:"detail,omitempty"`
	IsError bool   `json:"is_error,omitempty"`

	TaskID     string `json:"task_id,omitempty"`
	TaskStatus string `json:"task_status,omitempty"`
	// TaskType is a task's kind as Claude Code names it (local_bash,
	// local_agent, local_workflow, …).
	TaskType   string `json:"task_type,omitempty"`
	Background int    `json:"background,omitempty"`

	Final bool `json:"final,omitempty"`

	// Error is an error code or message the agent reported, or for
	// KindInvalid why the line could not be read.
	Error string `json:"error,omitempty"`
	// ErrorStatus, Attempt, MaxAttempts and RetryDelayMS describe a
	// failed model API call (KindRetry): its HTTP status, when the agent
	// reported one, which try failed, how many it makes, and how long it
	// waits before the next.
	ErrorStatus  int   `json:"error_status,omitempty"`
	Attempt      int   `json:"attempt,omitempty"`
	MaxAttempts  int   `json:"max_attempts,omitempty"`
	RetryDelayMS int64 `json:"retry_delay_ms,omitempty"`
	// Errors are the errors a result reported (Claude's errors[], Codex's
	// turn.failed message), at most 20.
	Errors []string `json:"errors,omitempty"`

	Raw          string `json:"raw,omitempty"`
	RawTruncated bool   `json:"raw_truncated,omitempty"`
	// Cut reports that the line was longer than Spec.MaxLine and was read
	// up to the cut.
	Cut bool `json:"cut,omitempty"`
}
