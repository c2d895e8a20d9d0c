package store

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/corralrun/corral"
)

// Errors returned by a Store. Drivers wrap them with detail; test them with
// errors.Is.
var (
	// ErrNotFound means the agent, schedule or execution does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means an agent or schedule of that name or id already exists.
	ErrExists = errors.New("already exists")
	// ErrConflict means the record changed under the caller: the execution
	// is already terminal, claimed by another worker, or a schedule fire was
	// taken by another worker.
	ErrConflict = errors.New("conflict")
	// ErrBusy means an agent still has queued or running executions and
	// cannot be deleted yet.
	ErrBusy = errors.New("agent busy")
	// ErrBadCursor means a listing cursor is not one the store returned.
	ErrBadCursor = errors.New("bad cursor")
	// ErrLimit means a record would exceed one of the store's Limits (too
	// many agents, too many schedules for one agent).
	ErrLimit = errors.New("limit reached")
	// ErrNotReady, returned by a DispatchConfig.Run function, means the
	// worker cannot take the dispatch now (its store refuses writes);
	// the engine offers it again a few seconds later, without counting
	// an attempt.
	ErrNotReady = errors.New("worker not ready")
)

// Submission asks for one task to be run by an agent.
type Submission struct {
	Agent      string
	Input      string
	Timeout    corral.Duration
	Trigger    corral.Trigger
	ScheduleID string
	RetryOf    string
	Attempt    int
	// FireAt is the schedule fire this submission is for (FireSchedule).
	FireAt *time.Time
	// TraceParent and TraceState are the execution's trace context
	// (Execution.TraceParent), kept as given.
	TraceParent, TraceState string
}

// NextAttempt is the attempt of a run that Finish records after one that
// failed, when the service's retry policy says so: it runs at At, for
// Reason, continuing ResumeSession when it is set.
type NextAttempt struct {
	At            time.Time
	Reason        string
	ResumeSession string
}

// Admission reports what Submit decided. The execution is always recorded,
// a rejected one too.
type Admission struct {
	Execution *corral.Execution
	// Running, Capacity, Queued and Backlog describe the agent when the
	// decision was taken, for the caller's message.
	Running, Capacity int
	Queued, Backlog   int
	// RetryAt, when set, is when the agent's spent budget window reopens:
	// the task was held or refused for its budget, not its capacity.
	RetryAt time.Time
}

// ExecutionFilter selects executions for ListExecutions, newest first.
type ExecutionFilter struct {
	Agent    string
	Statuses []corral.Status
	WorkerID string
	Since    time.Time // created at or after
	Until    time.Time // created before
	// Cursor continues a listing: pass the NextCursor of the previous page.
	Cursor string
	// Limit is the page size; zero means 50, at most MaxPage.
	Limit int
}

// MaxPage is the largest page a listing returns.
const MaxPage = 1000

// ScheduleFilter selects schedules for ListSchedules, oldest first.
type ScheduleFilter struct {
	// Agent selects one agent's schedules; empty means every agent's.
	Agent string
	// Cursor continues a listing: pass the cursor of the previous page.
	Cursor string
	// Limit is the page size; zero means 100, at most MaxPage.
	Limit int
}

// Limits bound what a store holds, against unbounded growth. Zero fields
// mean the defaults below; negative ones mean no limit. The store checks
// them in the transaction that creates the record.
type Limits struct {
	// MaxAgents bounds the agents; zero means 1,000.
	MaxAgents int
	// MaxSchedulesPerAgent bounds each agent's schedules; zero means
	// 1,000.
	MaxSchedulesPerAgent int
}

// Default limits.
const (
	DefaultMaxAgents            = 1000
	DefaultMaxSchedulesPerAgent = 1000
)

// Prune selects finished executions for PruneExecutions: those created
// before Before, and those beyond the newest Keep finished ones. Zero
// fields select nothing by that rule. Queued and running executions are
// never pruned.
type Prune struct {
	Before time.Time
	Keep   int
	// Limit bounds the executions deleted by one call; zero means 500.
	Limit int
}

// Pruned is an execution PruneExecutions deleted, with the log file its
// record named (for the caller to delete).
type Pruned struct {
	ID      string
	LogPath string
}

// AgentActivity is what a dashboard shows of one agent, counted by the
// database without reading any execution record.
type AgentActivity struct {
	Agent string
	// Running is the slots held; Queued the executions waiting.
	Running, Queued int
	// Succeeded of Finished among the agent's most recent finished runs
	// (succeeded, failed or interrupted: cancelled and rejected runs say
	// nothing of the agent).
	Succeeded, Finished int
	// Schedules counts the agent's schedules; NextFire is the earliest
	// next fire of its enabled ones, nil for none.
	Schedules int
	NextFire  *time.Time
}

// Worker is one running service instance that owns executions.
type Worker struct {
	ID string `json:"id"`
	// Host and BootID say which machine and which boot the worker ran on,
	// so that recovery only kills recorded process trees that are on this
	// machine in this boot. Pid and PidStart name the worker's process.
	Host     string `json:"host"`
	BootID   string `json:"boot_id,omitempty"`
	Pid      int    `json:"pid"`
	PidStart uint64 `json:"pid_start,omitempty"`
	// Labels are what the worker advertises (corral serve --labels); it
	// runs the tasks of agents whose labels it all has.
	Labels    []string  `json:"labels,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Heartbeat time.Time `json:"heartbeat_at"`
}

// Run is an execution as the worker that runs it, and crash recovery
// after it, need it: the record and what the store keeps beside it, which
// no client sees.
type Run struct {
	*corral.Execution
	// LogPath is where the run's log is, on the disk of the worker that
	// runs it.
	LogPath string `json:"log_path,omitempty"`
	// Handle is the recorded handle of the run's process tree, for crash
	// recovery. The store keeps it as the service wrote it.
	Handle json.RawMessage `json:"handle,omitempty"`
	// Hooked says that its agent had webhooks (or the store default ones)
	// when it was admitted: the transactions that change it write their
	// events' deliveries.
	Hooked bool `json:"hooked,omitempty"`
}

// RunInfo is what a worker records while its run goes on (SetRunInfo):
// what recovery needs and what has been salvaged so far. Zero fields are
// left as they are.
type RunInfo struct {
	// Handle is the handle of the run's process tree, opaque to the
	// store; Containment is the tier that holds it.
	Handle      json.RawMessage
	Containment corral.Containment
	// SessionID, NumTurns, CostUSD and Usage are a headless turn's
	// salvage so far.
	SessionID string
	NumTurns  int
	CostUSD   float64
	Usage     json.RawMessage
}
