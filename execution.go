package corral

import (
	"encoding/json"
	"time"
)

// Trigger says what created an execution.
type Trigger string

const (
	TriggerAPI      Trigger = "api"
	TriggerSchedule Trigger = "schedule"
	TriggerRetry    Trigger = "retry"
)

// Execution is the record of one task: what was asked, where it stands,
// and what came of it. It is what the API serves and every client reads;
// what only the worker that runs it needs (the handle of its process
// tree, the path of its log on that worker's disk) is kept beside it by
// the store, never in it.
type Execution struct {
	ID         string  `json:"id"`
	Agent      string  `json:"agent"`
	Trigger    Trigger `json:"trigger"`
	ScheduleID string  `json:"schedule_id,omitempty"`
	RetryOf    string  `json:"retry_of,omitempty"`
	// FireAt is the schedule's fire time a scheduled execution is for;
	// each fire of a schedule has at most one execution.
	FireAt *time.Time `json:"fire_at,omitempty"`
	// Attempt counts the attempts of a run, from 1; MaxAttempts is how
	// many its agent allowed when it was created. A retry (Trigger retry)
	// names the attempt before it in RetryOf and says why it was made in
	// RetryReason; it waits for NextAttemptAt (status waiting) before it
	// takes a slot. An attempt that was retried names the next one in
	// RetriedBy.
	Attempt       int        `json:"attempt"`
	MaxAttempts   int        `json:"max_attempts,omitempty"`
	RetriedBy     string     `json:"retried_by,omitempty"`
	RetryReason   string     `json:"retry_reason,omitempty"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	// ResumeSession is the session of the attempt before that this one
	// continues (its agent resumes sessions).
	ResumeSession string `json:"resume_session,omitempty"`
	// ChainCostUSD is the cost of this attempt and those before it (while
	// it runs, of those before it).
	ChainCostUSD float64 `json:"chain_cost_usd,omitempty"`

	Input   string   `json:"input"`
	Timeout Duration `json:"timeout,omitempty"`

	// Outcome holds where the execution stands (Status) and, once it has
	// ended, how and what it printed, as the Outcome that finished it said
	// (see Apply).
	Outcome

	// Slot is the capacity slot of its agent the execution holds while it
	// runs (1 to the agent's max_parallel_tasks), 0 when it holds none.
	Slot int `json:"slot,omitempty"`
	// WorkerID is the worker that runs or ran it.
	WorkerID        string `json:"worker_id,omitempty"`
	CancelRequested bool   `json:"cancel_requested,omitempty"`

	CreatedAt  time.Time  `json:"created_at"`
	AdmittedAt *time.Time `json:"admitted_at,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	DurationMS int64      `json:"duration_ms,omitempty"`

	// Summary marks a record as listings return it: without its output
	// bodies (Stdout, Stderr, Result) and with Input and Error cut to
	// SummaryChars characters. A single execution is returned whole.
	Summary bool `json:"summary,omitempty"`
}

// SummaryChars is how many characters of an execution's input and error
// a summary keeps.
const SummaryChars = 1024

// Outcome is how a run ended: the one shape that travels from the layer
// that ran it to the record (Execution embeds it). Its JSON names are the
// execution's.
type Outcome struct {
	// Status is where the execution stands; an outcome that finishes
	// one has a terminal status.
	Status    Status    `json:"status"`
	ErrorType ErrorType `json:"error_type,omitempty"`
	Error     string    `json:"error,omitempty"`
	ExitCode  *int      `json:"exit_code,omitempty"`
	Signal    string    `json:"signal,omitempty"`
	// Result is a headless turn's final text.
	Result string `json:"result,omitempty"`

	// Salvage from headless turns, kept on failure too.
	SessionID string  `json:"session_id,omitempty"`
	NumTurns  int     `json:"num_turns,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
	// CostEstimated says CostUSD was computed from the usage and a price
	// table: the agent reported no cost (Codex never does).
	CostEstimated bool            `json:"cost_estimated,omitempty"`
	Usage         json.RawMessage `json:"usage,omitempty"`
	FinalizedBy   string          `json:"finalized_by,omitempty"`
	// ResetAt is when the provider said its rate limit resets, when the
	// stream told; a retry waits for it. ResumeNote says why a resume that
	// was asked for did not take (the agent started a new session).
	ResetAt    *time.Time `json:"reset_at,omitempty"`
	ResumeNote string     `json:"resume_note,omitempty"`

	// Output head and tail (redacted), byte counts, and what the run's
	// log is missing, when it is: records dropped at its size bound, or
	// that could not be written (a full disk), or that it could not be
	// created at all.
	Stdout          string `json:"stdout,omitempty"`
	Stderr          string `json:"stderr,omitempty"`
	StdoutBytes     int64  `json:"stdout_bytes,omitempty"`
	StderrBytes     int64  `json:"stderr_bytes,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	LogNote         string `json:"log_note,omitempty"`

	// Supervision facts: the containment that held the process tree, the
	// processes killed at its end, those killed by crash recovery, and
	// those that could not be killed.
	Containment Containment `json:"containment,omitempty"`
	Killed      int         `json:"killed,omitempty"`
	Reclaimed   int         `json:"reclaimed,omitempty"`
	Survivors   int         `json:"survivors,omitempty"`

	// Confinement: the sandbox that held the run (nil when it ran
	// unconfined), what kept it from the service's secrets (the task
	// guard, or why it ran unguarded) and the user it ran as.
	Sandbox *SandboxReport `json:"sandbox,omitempty"`
	Guard   *GuardReport   `json:"guard,omitempty"`
	User    string         `json:"user,omitempty"`

	// Duration is how long the run took; zero means from its start to
	// the time it was finished. Ended is when it ended; zero means when
	// the outcome is recorded. The record keeps them as its DurationMS
	// and FinishedAt.
	Duration time.Duration `json:"-"`
	Ended    time.Time     `json:"-"`
}

// Apply writes o into e as its terminal state, finished at now. Salvage
// (session, turns, cost, usage) and supervision facts (log note,
// containment, sandbox, user) recorded while the run went on are kept
// where o has none. A store calls it inside the transaction that checked
// e was not terminal yet.
func (e *Execution) Apply(o *Outcome, now time.Time) {
	kept := e.Outcome
	e.Outcome = *o
	if e.SessionID == "" {
		e.SessionID = kept.SessionID
	}
	if e.NumTurns == 0 {
		e.NumTurns = kept.NumTurns
	}
	if e.CostUSD == 0 {
		e.CostUSD = kept.CostUSD
	}
	if len(e.Usage) == 0 {
		e.Usage = kept.Usage
	}
	if e.LogNote == "" {
		e.LogNote = kept.LogNote
	}
	if e.Containment == "" {
		e.Containment = kept.Containment
	}
	if e.Sandbox == nil {
		e.Sandbox = kept.Sandbox
	}
	if e.Guard == nil {
		e.Guard = kept.Guard
	}
	if e.User == "" {
		e.User = kept.User
	}
	e.ChainCostUSD += e.CostUSD
	e.NextAttemptAt = nil
	e.FinishedAt = &now
	switch {
	case o.Duration > 0:
		e.DurationMS = o.Duration.Milliseconds()
	case e.StartedAt != nil:
		e.DurationMS = now.Sub(*e.StartedAt).Milliseconds()
	}
	e.Duration, e.Ended = 0, time.Time{}
	e.Slot = 0
}
