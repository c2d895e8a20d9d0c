package store

import (
	"context"
	"time"
)

// Store is the durable state of the task service. Its methods are safe for
// concurrent use by many goroutines, and, for drivers of shared databases,
// by many processes on many machines: every rule below is enforced by the
// database, not by the caller.
type Store interface {
	// CreateAgent records a new agent (normalized by the caller). It fails
	// with ErrExists when the name is taken, and with ErrLimit when the
	// store holds Limits.MaxAgents agents already.
	CreateAgent(ctx context.Context, a *Agent) error
	// GetAgent returns the agent, or ErrNotFound.
	GetAgent(ctx context.Context, name string) (*Agent, error)
	// ListAgents returns every agent, by name.
	ListAgents(ctx context.Context) ([]*Agent, error)
	// UpdateAgent replaces an agent's configuration. When its capacity
	// grew, queued executions are promoted into the new slots in the same
	// transaction. Executions already running keep their slots even when
	// the capacity shrank below them; no new one is admitted until the
	// count is under the new capacity.
	UpdateAgent(ctx context.Context, a *Agent) error
	// DeleteAgent removes an agent and its schedules. It fails with ErrBusy
	// while the agent has queued or running executions; finished
	// executions are kept.
	DeleteAgent(ctx context.Context, name string) error

	// Submit admits a task in one transaction: it takes a free slot and
	// hands the execution to the job engine (status running), or queues it
	// (status queued) when the agent overflows to a queue with room, or
	// records it as rejected. It fails with ErrNotFound for an unknown
	// agent.
	Submit(ctx context.Context, s *Submission) (*Admission, error)
	// GetExecution returns the execution, or ErrNotFound.
	GetExecution(ctx context.Context, id string) (*Execution, error)
	// ListExecutions returns one page of executions, newest first, as
	// summaries (Execution.Summary: no output bodies, input and error
	// cut), and the cursor of the next page ("" at the end). It fails
	// with ErrBadCursor for a cursor it did not return.
	ListExecutions(ctx context.Context, f ExecutionFilter) ([]*Execution, string, error)
	// PruneExecutions deletes up to p.Limit finished executions that p
	// selects, oldest first, and returns them with their log paths; the
	// caller deletes the logs. Call it again until it returns fewer than
	// the limit.
	PruneExecutions(ctx context.Context, p Prune) ([]Pruned, error)
	// Claim makes workerID the owner of an admitted execution, marks it
	// started and records where its log will be. It fails with ErrConflict when the execution is not running
	// or is already owned (a duplicate dispatch), and returns the record
	// otherwise. An execution whose cancellation was requested before it
	// was claimed is finished as cancelled instead, and Claim fails with
	// ErrConflict.
	Claim(ctx context.Context, id, workerID string, now time.Time, logPath string) (*Execution, error)
	// SetRunInfo records, while the run goes on, what recovery needs
	// (the process tree's handle, the log path) and what has been salvaged
	// so far (a headless session id). Zero fields of info are left as they
	// are. It fails with ErrConflict unless workerID owns the running
	// execution.
	SetRunInfo(ctx context.Context, id, workerID string, info *Execution) error
	// Finish writes a terminal state by compare-and-set: only a queued or
	// running execution changes, so a second Finish is a no-op and
	// returns applied false with the record as it stands. In the same
	// transaction it releases the slot this execution held (and no other)
	// and admits the oldest queued executions of the agent into free
	// slots, handing them to the job engine; once that commits, an
	// engine started on this handle runs them at once (without waiting
	// for its poll) when it serves their agent and has room.
	Finish(ctx context.Context, id string, o *Outcome) (e *Execution, applied bool, err error)
	// RequestCancel cancels a queued execution at once (status cancelled,
	// no slot was held), or flags a running one for its owner to stop;
	// the owner then finishes it. A running execution whose owner is no
	// registered worker (nobody will ever finish it) is cancelled at
	// once, its slot released. It fails with ErrConflict, returning the
	// record, when the execution is already terminal.
	RequestCancel(ctx context.Context, id string, now time.Time) (*Execution, error)
	// CancelRequested returns the running executions owned by workerID
	// whose cancellation was requested.
	CancelRequested(ctx context.Context, workerID string) ([]string, error)
	// Slots returns the slots an agent holds, by number.
	Slots(ctx context.Context, agent string) ([]Slot, error)
	// Stats counts executions by agent and status, with slot usage.
	Stats(ctx context.Context) ([]AgentStats, error)
	// Activity returns each agent's activity, by name: held slots,
	// queued executions, the outcome of its last recent finished runs,
	// its schedules. It reads counts and statuses, never records.
	Activity(ctx context.Context, recent int) ([]AgentActivity, error)
	// Unclaimed returns running executions that no worker has claimed
	// although they were admitted before the given time: their dispatch
	// may have died with a worker. Redispatch hands one to the job engine
	// again; a duplicate dispatch is harmless (Claim lets one win).
	Unclaimed(ctx context.Context, admittedBefore time.Time) ([]*Execution, error)
	Redispatch(ctx context.Context, id string) error

	// CreateSchedule records a schedule (its NextFireAt computed by the
	// caller), or fails with ErrLimit when its agent has
	// Limits.MaxSchedulesPerAgent already; GetSchedule, ListSchedules
	// (one page, oldest first, and the cursor of the next, "" at the
	// end), UpdateSchedule and DeleteSchedule are what they say;
	// ErrNotFound for an unknown id or agent, ErrBadCursor for a cursor
	// the store did not return.
	CreateSchedule(ctx context.Context, s *Schedule) error
	GetSchedule(ctx context.Context, id string) (*Schedule, error)
	ListSchedules(ctx context.Context, f ScheduleFilter) ([]*Schedule, string, error)
	UpdateSchedule(ctx context.Context, s *Schedule) error
	DeleteSchedule(ctx context.Context, id string) error
	// NextFire returns the earliest NextFireAt of the enabled schedules,
	// or false when none is pending.
	NextFire(ctx context.Context) (time.Time, bool, error)
	// DueSchedules returns the enabled schedules whose NextFireAt is not
	// after now.
	DueSchedules(ctx context.Context, now time.Time) ([]*Schedule, error)
	// FireSchedule moves a schedule from the fire at expected to next, by
	// compare-and-set on NextFireAt, and, when sub is not nil, submits its
	// task in the same transaction. Of many workers firing the same time,
	// one wins; the others get ErrConflict.
	FireSchedule(ctx context.Context, id string, expected, next time.Time, sub *Submission) (*Admission, error)

	// RegisterWorker records a live worker; Heartbeat renews its lease;
	// Workers lists them; DeleteWorker forgets one (after its executions
	// were recovered).
	RegisterWorker(ctx context.Context, w *Worker) error
	Heartbeat(ctx context.Context, workerID string, now time.Time) error
	Workers(ctx context.Context) ([]*Worker, error)
	DeleteWorker(ctx context.Context, workerID string) error

	// StartEngine starts the durable job engine that dispatches admitted
	// executions to cfg.Run on this worker: those of agents whose labels
	// the worker all has (cfg.Labels). It returns once the engine runs.
	StartEngine(ctx context.Context, cfg EngineConfig) error
	// RefreshEngine makes the engine work the dispatches of agents whose
	// label sets appeared since it started (an agent created or changed
	// through any worker). The service calls it with each heartbeat and
	// after changing an agent.
	RefreshEngine(ctx context.Context) error
	// StopEngine stops fetching new dispatches and waits for the runs in
	// flight to end by themselves until ctx is done; then it cancels
	// their context and waits for them to end.
	StopEngine(ctx context.Context) error

	// RevokeSession records that the web session id (an opaque string of
	// at most 128 bytes) is logged out, until expires, when it would have
	// ended anyway. Every worker sharing the database sees it at once, and
	// a restart keeps it. Revocations past their expiry are forgotten.
	RevokeSession(ctx context.Context, id string, expires time.Time) error
	// SessionRevoked reports whether the session id was revoked.
	SessionRevoked(ctx context.Context, id string) (bool, error)

	// Ping reports whether the database answers (readiness).
	Ping(ctx context.Context) error

	// Close releases the database. Stop the engine first.
	Close() error
}

// CancelWatcher is implemented by stores of shared databases that can
// push cancellation requests to the worker that owns the run (PostgreSQL
// LISTEN/NOTIFY), sparing it the wait for its next poll. WatchCancels
// calls fn with each running execution of workerID whose cancellation is
// requested, until ctx is done or the connection fails; the caller polls
// CancelRequested as well, so a lost notification only costs latency.
type CancelWatcher interface {
	WatchCancels(ctx context.Context, workerID string, fn func(executionID string)) error
}

// EngineConfig configures the job engine of one worker.
type EngineConfig struct {
	// WorkerID names this worker in the engine.
	WorkerID string
	// MaxRuns is how many executions this worker runs at once; zero means
	// 256. Slots bound each agent; this bounds the worker.
	MaxRuns int
	// Labels are what this worker advertises: it runs the executions of
	// agents whose labels it all has. Empty means only agents without
	// labels.
	Labels []string
	// Run runs one dispatched execution to its end. Its context is
	// cancelled when the engine stops. An error makes the engine retry the
	// dispatch later; Claim keeps a retried dispatch from running twice.
	Run func(ctx context.Context, executionID string) error
}
