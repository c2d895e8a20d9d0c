package store

import (
	"context"
	"time"

	"github.com/corralrun/corral"
)

// Store is the durable state of the task service: each concern an
// interface of its own, all held by one database. Its methods are safe
// for concurrent use by many goroutines, and, for drivers of shared
// databases, by many processes on many machines: every rule below is
// enforced by the database, not by the caller.
type Store interface {
	Agents
	Records
	Lifecycle
	Schedules
	Workers
	Sessions
	SessionStates
	Budgets
	Webhooks

	// Dispatcher returns the job engine on this store's database, for the
	// service to start and stop. Admission hands executions to it inside
	// the transactions that admit them.
	Dispatcher() Dispatcher
	// Ping reports whether the database answers (readiness).
	Ping(ctx context.Context) error
	// Close releases the database. Stop the dispatcher first.
	Close() error
}

// Agents keeps the agents.
type Agents interface {
	// CreateAgent records a new agent (normalized by the caller). It fails
	// with ErrExists when the name is taken, and with ErrLimit when the
	// store holds Limits.MaxAgents agents already.
	CreateAgent(ctx context.Context, a *corral.Agent) error
	// GetAgent returns the agent, or ErrNotFound.
	GetAgent(ctx context.Context, name string) (*corral.Agent, error)
	// ListAgents returns every agent, by name.
	ListAgents(ctx context.Context) ([]*corral.Agent, error)
	// UpdateAgent replaces an agent's configuration. When its capacity
	// grew, queued executions are promoted into the new slots in the same
	// transaction. Executions already running keep their slots even when
	// the capacity shrank below them; no new one is admitted until the
	// count is under the new capacity.
	UpdateAgent(ctx context.Context, a *corral.Agent) error
	// DeleteAgent removes an agent and its schedules. It fails with ErrBusy
	// while the agent has queued or running executions; finished
	// executions are kept.
	DeleteAgent(ctx context.Context, name string) error
}

// Records reads and prunes execution records, and counts them.
type Records interface {
	// GetExecution returns the execution, or ErrNotFound.
	GetExecution(ctx context.Context, id string) (*corral.Execution, error)
	// GetRun returns the execution with what the store keeps beside it
	// (its log path, its process tree's handle), or ErrNotFound.
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListExecutions returns one page of executions, newest first, as
	// summaries (Execution.Summary: no output bodies, input and error
	// cut), and the cursor of the next page ("" at the end). It fails
	// with ErrBadCursor for a cursor it did not return.
	ListExecutions(ctx context.Context, f ExecutionFilter) ([]*corral.Execution, string, error)
	// PruneExecutions deletes up to p.Limit finished executions that p
	// selects, oldest first, and returns them with their log paths; the
	// caller deletes the logs. Call it again until it returns fewer than
	// the limit.
	PruneExecutions(ctx context.Context, p Prune) ([]Pruned, error)
	// Stats counts executions by agent and status, with slot usage.
	Stats(ctx context.Context) ([]corral.AgentStats, error)
	// Activity returns each agent's activity, by name: held slots,
	// queued executions, the outcome of its last recent finished runs,
	// its schedules. It reads counts and statuses, never records.
	Activity(ctx context.Context, recent int) ([]AgentActivity, error)
}

// Lifecycle admits tasks into capacity slots, hands them to workers and
// records how they end: the rules that must hold across a fleet.
type Lifecycle interface {
	// Submit admits a task in one transaction: it takes a free slot and
	// hands the execution to the job engine (status running), or queues it
	// (status queued) when the agent overflows to a queue with room, or
	// records it as rejected. It fails with ErrNotFound for an unknown
	// agent.
	Submit(ctx context.Context, s *Submission) (*Admission, error)
	// Claim makes workerID the owner of an admitted execution, marks it
	// started and records where its log will be. It fails with
	// ErrConflict when the execution is not running or is already owned
	// (a duplicate dispatch), and returns the record otherwise. An
	// execution whose cancellation was requested before it was claimed is
	// finished as cancelled instead, and Claim fails with ErrConflict.
	Claim(ctx context.Context, id, workerID string, now time.Time, logPath string) (*Run, error)
	// SetRunInfo records, while the run goes on, what recovery needs and
	// what has been salvaged so far (RunInfo; zero fields are left as
	// they are). It fails with ErrConflict unless workerID owns the
	// running execution.
	SetRunInfo(ctx context.Context, id, workerID string, info RunInfo) error
	// Finish writes a terminal state by compare-and-set: only a queued or
	// running execution changes, so a second Finish is a no-op and
	// returns applied false with the record as it stands. In the same
	// transaction it releases the slot this execution held (and no other)
	// and admits the oldest queued executions of the agent into free
	// slots, handing them to the job engine; once that commits, a
	// dispatcher started on this store runs them at once (without waiting
	// for its poll) when it serves their agent and has room. When next is
	// not nil and the end is applied, the same transaction records the
	// run's next attempt (status waiting, see NextAttempt) and links the
	// two: an end is retried exactly once, however many workers record it.
	Finish(ctx context.Context, id string, o *corral.Outcome, next *NextAttempt) (e *corral.Execution, applied bool, err error)
	// DueAttempts returns the waiting attempts whose time has come (their
	// NextAttemptAt is not after now), oldest first, and the earliest
	// time of those still to come (zero for none).
	DueAttempts(ctx context.Context, now time.Time) (due []string, next time.Time, err error)
	// AdmitAttempt admits a due waiting attempt: into a free slot of its
	// agent (status running, dispatched as a submission is), else into
	// the agent's queue, in the order of its creation (status queued). It
	// fails with ErrConflict when the attempt is not waiting or not due
	// (another worker admitted it), and finishes it failed when its agent
	// no longer exists.
	AdmitAttempt(ctx context.Context, id string, now time.Time) (*corral.Execution, error)
	// RequestCancel cancels a queued execution at once (status cancelled,
	// no slot was held), or flags a running one for its owner to stop;
	// the owner then finishes it. A running execution whose owner is no
	// registered worker (nobody will ever finish it) is cancelled at
	// once, its slot released. It fails with ErrConflict, returning the
	// record, when the execution is already terminal.
	RequestCancel(ctx context.Context, id string, now time.Time) (*corral.Execution, error)
	// CancelRequested returns the running executions owned by workerID
	// whose cancellation was requested.
	CancelRequested(ctx context.Context, workerID string) ([]string, error)
	// Slots returns the slots an agent holds, by number.
	Slots(ctx context.Context, agent string) ([]corral.Slot, error)
	// RunningOn returns the running executions workerID owns, with what
	// recovery needs of them.
	RunningOn(ctx context.Context, workerID string) ([]*Run, error)
	// Unclaimed returns running executions that no worker has claimed
	// although they were admitted before the given time: their dispatch
	// may have died with a worker. Redispatch hands one to the job engine
	// again; a duplicate dispatch is harmless (Claim lets one win).
	Unclaimed(ctx context.Context, admittedBefore time.Time) ([]*corral.Execution, error)
	Redispatch(ctx context.Context, id string) error
}

// Schedules keeps the schedules and fires them once across a fleet.
type Schedules interface {
	// CreateSchedule records a schedule (its NextFireAt computed by the
	// caller), or fails with ErrLimit when its agent has
	// Limits.MaxSchedulesPerAgent already; GetSchedule, ListSchedules
	// (one page, oldest first, and the cursor of the next, "" at the
	// end), UpdateSchedule and DeleteSchedule are what they say;
	// ErrNotFound for an unknown id or agent, ErrBadCursor for a cursor
	// the store did not return.
	CreateSchedule(ctx context.Context, s *corral.Schedule) error
	GetSchedule(ctx context.Context, id string) (*corral.Schedule, error)
	ListSchedules(ctx context.Context, f ScheduleFilter) ([]*corral.Schedule, string, error)
	UpdateSchedule(ctx context.Context, s *corral.Schedule) error
	DeleteSchedule(ctx context.Context, id string) error
	// NextFire returns the earliest NextFireAt of the enabled schedules,
	// or false when none is pending.
	NextFire(ctx context.Context) (time.Time, bool, error)
	// DueSchedules returns the enabled schedules whose NextFireAt is not
	// after now.
	DueSchedules(ctx context.Context, now time.Time) ([]*corral.Schedule, error)
	// FireSchedule moves a schedule from the fire at expected to next, by
	// compare-and-set on NextFireAt, and, when sub is not nil, submits its
	// task in the same transaction. Of many workers firing the same time,
	// one wins; the others get ErrConflict.
	FireSchedule(ctx context.Context, id string, expected, next time.Time, sub *Submission) (*Admission, error)
}

// Workers keeps the live workers of a fleet and their leases.
type Workers interface {
	// RegisterWorker records a live worker; Heartbeat renews its lease;
	// Workers lists them; DeleteWorker forgets one (after its executions
	// were recovered).
	RegisterWorker(ctx context.Context, w *Worker) error
	Heartbeat(ctx context.Context, workerID string, now time.Time) error
	Workers(ctx context.Context) ([]*Worker, error)
	DeleteWorker(ctx context.Context, workerID string) error
}

// Sessions keeps the revocations of web sessions.
type Sessions interface {
	// RevokeSession records that the web session id (an opaque string of
	// at most 128 bytes) is logged out, until expires, when it would have
	// ended anyway. Every worker sharing the database sees it at once, and
	// a restart keeps it. Revocations past their expiry are forgotten.
	RevokeSession(ctx context.Context, id string, expires time.Time) error
	// SessionRevoked reports whether the session id was revoked.
	SessionRevoked(ctx context.Context, id string) (bool, error)
}

// Webhooks is the durable outbox of webhook deliveries. The transactions
// of Lifecycle write a delivery for each webhook of the agent (and each
// default one) that wants the event they make — queued, started, the end,
// retrying, stalled — so that an event is delivered if and only if it
// happened.
type Webhooks interface {
	// SetDefaultWebhooks sets the webhooks every agent's events also go to
	// (corral serve --webhook), for the transactions of this handle.
	SetDefaultWebhooks(hooks []corral.Webhook)
	// EnqueueEvent writes a delivery of an event that no transaction of
	// Lifecycle makes (a budget window's warning or exhaustion) to each
	// webhook of agent that wants it, body being the event's JSON.
	EnqueueEvent(ctx context.Context, agent, event string, body []byte) error
	// ClaimDeliveries returns up to limit deliveries due at now, each the
	// oldest pending one of its execution (or agent) and endpoint, leased
	// to the caller until now+lease: no other worker delivers them
	// meanwhile.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*corral.WebhookDelivery, error)
	// RecordDelivery records the attempt of a claimed delivery: delivered,
	// else retried at next, or failed for good when next is zero.
	RecordDelivery(ctx context.Context, id string, delivered bool, status int, errText string, next time.Time) error
	// Deliveries returns the deliveries of an execution's events, oldest
	// first.
	Deliveries(ctx context.Context, executionID string) ([]*corral.WebhookDelivery, error)
	// PruneDeliveries deletes delivered and failed deliveries created
	// before before.
	PruneDeliveries(ctx context.Context, before time.Time) (int, error)
}

// Budgets keeps what agents' runs spend per budget window
// (corral.Budget), for the fleet to share.
type Budgets interface {
	// AddSpend adds cost and tokens to each of the agent's windows, in
	// one transaction whose row locks make workers that add together
	// count every addition, and returns the windows' totals after it.
	AddSpend(ctx context.Context, agent string, windows []corral.Window, cost float64, tokens int64) ([]corral.WindowSpend, error)
	// WindowSpend returns what the agent's runs spent in each window.
	WindowSpend(ctx context.Context, agent string, windows []corral.Window) ([]corral.WindowSpend, error)
	// PromoteQueued admits the oldest queued executions of the agent
	// into its free slots, as a release would, if its budget allows: for
	// queued work held while a window was spent. It returns how many it
	// admitted.
	PromoteQueued(ctx context.Context, agent string) (int, error)
	// PruneSpend deletes the spend of windows not added to since before.
	PruneSpend(ctx context.Context, before time.Time) (int, error)
}

// SessionStates keeps the state of headless agents' sessions between the
// attempts of a run, for any worker of the fleet to resume them.
type SessionStates interface {
	// PutSessionState keeps st (its UpdatedAt set by the caller),
	// replacing what was kept of its session. It fails when st.Data is
	// over corral.MaxSessionState.
	PutSessionState(ctx context.Context, st *corral.SessionState) error
	// GetSessionState returns the state kept of a session, or
	// ErrNotFound.
	GetSessionState(ctx context.Context, sessionID string) (*corral.SessionState, error)
	// PruneSessionStates deletes the states not updated since before, and
	// returns how many.
	PruneSessionStates(ctx context.Context, before time.Time) (int, error)
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
