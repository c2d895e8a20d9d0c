package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
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
	// ErrNotReady, returned by an EngineConfig.Run function, means the
	// worker cannot take the dispatch now (its store refuses writes);
	// the engine offers it again a few seconds later, without counting
	// an attempt.
	ErrNotReady = errors.New("worker not ready")
)

// AgentKind says how an agent runs its task input.
type AgentKind string

const (
	// KindShell runs the input as a command line with the agent's shell.
	KindShell AgentKind = "shell"
	// KindHeadless substitutes the input (the prompt) into the agent's
	// command template and runs it as a headless agent turn.
	KindHeadless AgentKind = "headless"
)

// Overflow says what happens to a task submitted while every slot of its
// agent is taken.
type Overflow string

const (
	// OverflowReject refuses the task at once; it is recorded as rejected.
	OverflowReject Overflow = "reject"
	// OverflowQueue keeps it in a durable FIFO backlog of at most
	// Agent.MaxBacklog tasks; beyond that it is rejected.
	OverflowQueue Overflow = "queue"
)

// Defaults applied to an agent's zero values by [Agent.Normalize].
const (
	DefaultMaxParallelTasks = 3
	DefaultMaxBacklog       = 50
	DefaultShell            = "bash"
)

// Agent is a named runner of tasks with a capacity.
type Agent struct {
	Name string    `json:"name"`
	Kind AgentKind `json:"kind"`

	// Shell is the shell a shell agent runs its input with; empty means
	// bash. The input reaches the shell through a pipe, never its
	// arguments, so that other users do not see it in ps.
	Shell string `json:"shell,omitempty"`
	// Command is a headless agent's command template; every "{{prompt}}"
	// in an argument is replaced by the task input. When no argument holds
	// it, the prompt is appended as the last argument, after a "--" when
	// the template has none. Normalize refuses a template whose prompt
	// would land where options are parsed (see CheckPromptPlacement).
	Command []string `json:"command,omitempty"`

	// Workdir is the working directory of the agent's tasks; empty means
	// the service's own, or the home directory of the user they run as
	// when that is another user.
	Workdir string `json:"workdir,omitempty"`
	// Env holds variables added to each task's environment, such as the
	// API keys of a headless agent. Its values are write-only through the
	// API and the web UI: answers carry only EnvNames.
	Env map[string]string `json:"env,omitempty"`
	// EnvNames lists the names of Env, sorted. The API and the UI show it
	// in place of Env; the service ignores it in what it is given.
	EnvNames []string `json:"env_names,omitempty"`
	// PassEnv names variables of the service's own environment that the
	// agent's tasks receive, besides those every task receives (corral
	// serve --pass-env). The service's own secrets (CORRAL_TOKEN,
	// CORRAL_DB) are never passed on.
	PassEnv []string `json:"pass_env,omitempty"`
	// RunAs is the user the agent's tasks run as: a user name or a
	// numeric uid, resolved on the worker that runs the task. Empty means
	// the worker's default (corral serve --run-as), else the service's own
	// user. A worker started with --run-as runs no task as root or as
	// itself.
	RunAs string `json:"run_as,omitempty"`
	// Sandbox confines the agent's tasks (see corral.Sandbox): the task's
	// working directory is the workspace, and the service's data
	// directory is never readable inside. The zero value runs them
	// unconfined.
	Sandbox corral.Sandbox `json:"sandbox,omitzero"`

	// Labels pin the agent to the workers that can run it: its tasks are
	// dispatched only to workers that advertise every one of these labels
	// (corral serve --labels), such as the machine that holds its
	// workdir. Empty means any worker. Normalize sorts them.
	Labels []string `json:"labels,omitempty"`

	// MaxParallelTasks is the number of slots; zero means 3.
	MaxParallelTasks int `json:"max_parallel_tasks"`
	// Overflow is reject (the default) or queue.
	Overflow Overflow `json:"overflow"`
	// MaxBacklog bounds the queue under OverflowQueue; zero means 50.
	MaxBacklog int `json:"max_backlog"`

	// Timeout is the budget of one run (zero: none); a task may ask for a
	// shorter or longer one. StallTimeout and IdleTimeout are the headless
	// watchdogs (a tool call left open, no stream output); zero means the
	// headless layer's defaults. Grace is the time between the stop signal
	// and SIGKILL; zero means 2 s.
	Timeout      Duration `json:"timeout,omitempty"`
	StallTimeout Duration `json:"stall_timeout,omitempty"`
	IdleTimeout  Duration `json:"idle_timeout,omitempty"`
	Grace        Duration `json:"grace,omitempty"`
	// MaxOutput caps the bytes kept of each output stream in the execution
	// record (head and tail, with a line saying what was cut between
	// them); zero means 64 KiB, at most MaxOutputLimit. The full log is
	// in the execution's log file, up to the log's own size bound.
	MaxOutput int `json:"max_output,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Normalize fills the defaults of zero fields and reports what is invalid,
// in words a caller can act on.
func (a *Agent) Normalize() error {
	if err := ValidName(a.Name); err != nil {
		return fmt.Errorf("agent name: %w", err)
	}
	switch a.Kind {
	case KindShell:
		if a.Shell == "" {
			a.Shell = DefaultShell
		}
	case KindHeadless:
		if len(a.Command) == 0 {
			return errors.New(`headless agent needs a command template, e.g. ["claude", "-p", "--output-format", "stream-json", "--verbose", "--", "{{prompt}}"]`)
		}
		if err := CheckPromptPlacement(a.Command); err != nil {
			return err
		}
	case "":
		return errors.New(`agent kind missing: want "shell" or "headless"`)
	default:
		return fmt.Errorf("unknown agent kind %q: want \"shell\" or \"headless\"", a.Kind)
	}
	if a.MaxParallelTasks == 0 {
		a.MaxParallelTasks = DefaultMaxParallelTasks
	}
	if a.MaxParallelTasks < 0 || a.MaxParallelTasks > 10000 {
		return fmt.Errorf("max_parallel_tasks %d out of range 1..10000", a.MaxParallelTasks)
	}
	switch a.Overflow {
	case "":
		a.Overflow = OverflowReject
	case OverflowReject, OverflowQueue:
	default:
		return fmt.Errorf("unknown overflow %q: want \"reject\" or \"queue\"", a.Overflow)
	}
	if a.MaxBacklog == 0 {
		a.MaxBacklog = DefaultMaxBacklog
	}
	if a.MaxBacklog < 0 || a.MaxBacklog > 1000000 {
		return fmt.Errorf("max_backlog %d out of range 1..1000000", a.MaxBacklog)
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"timeout", a.Timeout}, {"stall_timeout", a.StallTimeout}, {"idle_timeout", a.IdleTimeout}, {"grace", a.Grace}} {
		if d.v < 0 {
			return fmt.Errorf("%s must not be negative", d.name)
		}
	}
	if a.MaxOutput < 0 || a.MaxOutput > MaxOutputLimit {
		return fmt.Errorf("max_output %d out of range 1..%d bytes (the full output is in the run's log)", a.MaxOutput, MaxOutputLimit)
	}
	for k, v := range a.Env {
		if k == "" || containsAny(k, "=\x00") {
			return fmt.Errorf("env name %q is invalid", k)
		}
		if containsAny(v, "\x00") {
			return fmt.Errorf("env %s: a value cannot hold a NUL byte", k)
		}
	}
	a.EnvNames = nil
	if err := a.normalizeIdentity(); err != nil {
		return err
	}
	labels, err := NormalizeLabels(a.Labels)
	if err != nil {
		return err
	}
	a.Labels = labels
	return nil
}

// MaxOutputLimit bounds Agent.MaxOutput: an execution record holds at
// most this many bytes of each output stream.
const MaxOutputLimit = 16 << 20

// MaxLabels bounds the labels of an agent or a worker.
const MaxLabels = 16

// NormalizeLabels checks labels (1 to 64 lowercase letters, digits, '-',
// '_' or '.', not starting with '.' or '-'), and returns them sorted with
// duplicates removed; nil for none.
func NormalizeLabels(labels []string) ([]string, error) {
	if len(labels) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		if err := ValidLabel(l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxLabels {
		return nil, fmt.Errorf("%d labels: at most %d", len(out), MaxLabels)
	}
	return out, nil
}

// ValidLabel checks one label: 1 to 64 lowercase letters, digits, '-',
// '_' or '.', not starting with '.' or '-'.
func ValidLabel(l string) error {
	if l == "" || len(l) > 64 {
		return fmt.Errorf("label %q must be 1 to 64 characters", l)
	}
	for i, r := range l {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || (r == '-' || r == '.') && i > 0
		if !ok {
			return fmt.Errorf("label %q may hold only lowercase letters, digits, '-', '_' and '.' (not first)", l)
		}
	}
	return nil
}

// Serves reports whether a worker advertising workerLabels may run the
// tasks of an agent requiring agentLabels: it has every one of them.
func Serves(workerLabels, agentLabels []string) bool {
	for _, l := range agentLabels {
		if !slices.Contains(workerLabels, l) {
			return false
		}
	}
	return true
}

// ValidName checks an agent name: 1 to 64 letters, digits, '-', '_' or
// '.', not starting with '.'.
func ValidName(s string) error {
	if s == "" || len(s) > 64 {
		return errors.New("must be 1 to 64 characters")
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' && i > 0
		if !ok {
			return fmt.Errorf("%q may hold only letters, digits, '-', '_' and '.' (not first)", s)
		}
	}
	return nil
}

func containsAny(s, chars string) bool {
	for _, c := range chars {
		for _, r := range s {
			if r == c {
				return true
			}
		}
	}
	return false
}

// Trigger says what created an execution.
type Trigger string

const (
	TriggerAPI      Trigger = "api"
	TriggerSchedule Trigger = "schedule"
	TriggerRetry    Trigger = "retry"
)

// Execution is the record of one task: what was asked, where it stands,
// and what came of it.
type Execution struct {
	ID         string  `json:"id"`
	Agent      string  `json:"agent"`
	Trigger    Trigger `json:"trigger"`
	ScheduleID string  `json:"schedule_id,omitempty"`
	RetryOf    string  `json:"retry_of,omitempty"`
	// FireAt is the schedule's fire time a scheduled execution is for;
	// each fire of a schedule has at most one execution.
	FireAt  *time.Time    `json:"fire_at,omitempty"`
	Attempt int           `json:"attempt"`
	Input   string        `json:"input"`
	Timeout Duration      `json:"timeout,omitempty"`
	Status  corral.Status `json:"status"`

	ErrorType corral.ErrorType `json:"error_type,omitempty"`
	Error     string           `json:"error,omitempty"`
	ExitCode  *int             `json:"exit_code,omitempty"`
	Signal    string           `json:"signal,omitempty"`
	// Result is a headless turn's final text.
	Result string `json:"result,omitempty"`

	// Salvage from headless turns, kept on failure too.
	SessionID   string          `json:"session_id,omitempty"`
	NumTurns    int             `json:"num_turns,omitempty"`
	CostUSD     float64         `json:"cost_usd,omitempty"`
	Usage       json.RawMessage `json:"usage,omitempty"`
	FinalizedBy string          `json:"finalized_by,omitempty"`

	// Output head and tail (redacted), byte counts, and the full log.
	Stdout          string `json:"stdout,omitempty"`
	Stderr          string `json:"stderr,omitempty"`
	StdoutBytes     int64  `json:"stdout_bytes,omitempty"`
	StderrBytes     int64  `json:"stderr_bytes,omitempty"`
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	LogPath         string `json:"log_path,omitempty"`
	// LogNote says what the log file is missing, when it is: records
	// dropped at its size bound, or that could not be written (a full
	// disk), or that it could not be created at all.
	LogNote string `json:"log_note,omitempty"`

	// Supervision facts.
	Containment corral.Containment `json:"containment,omitempty"`
	Killed      int                `json:"killed,omitempty"`
	Reclaimed   int                `json:"reclaimed,omitempty"` // processes killed by crash recovery

	// Confinement: the sandbox that held the run (nil when it ran
	// unconfined) and the user it ran as.
	Sandbox *corral.SandboxReport `json:"sandbox,omitempty"`
	User    string                `json:"user,omitempty"`

	// Ownership: the slot held while running, the worker that runs it, the
	// process tree it started (for crash recovery).
	SlotNo          int          `json:"slot,omitempty"`
	WorkerID        string       `json:"worker_id,omitempty"`
	Handle          *proc.Handle `json:"handle,omitempty"`
	CancelRequested bool         `json:"cancel_requested,omitempty"`

	CreatedAt  time.Time  `json:"created_at"`
	AdmittedAt *time.Time `json:"admitted_at,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	DurationMS int64      `json:"duration_ms,omitempty"`

	// Summary marks a record as listings return it: without its output
	// bodies (Stdout, Stderr, Result) and with Input and Error cut to
	// SummaryChars characters. GetExecution returns the whole record.
	Summary bool `json:"summary,omitempty"`
}

// SummaryChars is how many characters of an execution's input and error
// a summary keeps.
const SummaryChars = 1024

// Submission asks for one task to be run by an agent.
type Submission struct {
	Agent      string
	Input      string
	Timeout    Duration
	Trigger    Trigger
	ScheduleID string
	RetryOf    string
	Attempt    int
	// FireAt is the schedule fire this submission is for (FireSchedule).
	FireAt *time.Time
}

// Admission reports what Submit decided. The execution is always recorded,
// a rejected one too.
type Admission struct {
	Execution *Execution
	// Running, Capacity, Queued and Backlog describe the agent when the
	// decision was taken, for the caller's message.
	Running, Capacity int
	Queued, Backlog   int
}

// Outcome is what a finished run reports to Finish.
type Outcome struct {
	Status      corral.Status
	ErrorType   corral.ErrorType
	Error       string
	ExitCode    *int
	Signal      string
	Result      string
	SessionID   string
	NumTurns    int
	CostUSD     float64
	Usage       json.RawMessage
	FinalizedBy string

	Stdout, Stderr           string
	StdoutBytes, StderrBytes int64
	OutputTruncated          bool
	LogNote                  string
	Containment              corral.Containment
	Sandbox                  *corral.SandboxReport
	User                     string
	Killed, Reclaimed        int
	FinishedAt               time.Time
	Duration                 time.Duration
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

// Slot is one held capacity slot of an agent.
type Slot struct {
	No          int       `json:"slot"`
	ExecutionID string    `json:"execution_id"`
	Since       time.Time `json:"since"`
}

// AgentStats counts an agent's executions by status and its held slots.
type AgentStats struct {
	Agent     string                `json:"agent"`
	Capacity  int                   `json:"capacity"`
	SlotsUsed int                   `json:"slots_used"`
	ByStatus  map[corral.Status]int `json:"by_status"`
}

// MissedPolicy says what a schedule does with fires that passed while no
// worker was there to take them (the service was down).
type MissedPolicy string

const (
	// MissedSkip drops missed fires; the schedule waits for its next time.
	MissedSkip MissedPolicy = "skip"
	// MissedRunOnce runs the task once for all the fires that were missed.
	MissedRunOnce MissedPolicy = "run_once"
)

// Schedule fires a task for an agent on a cron expression.
type Schedule struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Cron is a cron expression with five fields, or six with seconds
	// first, or a descriptor such as @hourly or @every 90s.
	Cron     string       `json:"cron"`
	TimeZone string       `json:"time_zone"` // IANA name; empty means UTC
	Input    string       `json:"input"`
	Timeout  Duration     `json:"timeout,omitempty"`
	Enabled  bool         `json:"enabled"`
	Missed   MissedPolicy `json:"missed"`

	NextFireAt    *time.Time `json:"next_fire_at,omitempty"`
	LastFireAt    *time.Time `json:"last_fire_at,omitempty"`
	LastExecution string     `json:"last_execution_id,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
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

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("90s", "1h30m"); it also reads a number of seconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = 0
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err2 := json.Unmarshal(b, &secs); err2 != nil {
			return errors.New(`duration must be a string such as "90s" or a number of seconds`)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDuration parses a Go duration ("90s") or a plain number of seconds.
func ParseDuration(s string) (Duration, error) {
	if s == "" {
		return 0, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a Go duration such as \"90s\" or \"1h30m\"", s)
	}
	return Duration(v), nil
}

// ApplyOutcome writes o into e as its terminal state, finished at now;
// salvage (session, turns, cost, usage, containment) already recorded is
// kept where o has none. Drivers call it inside the transaction that
// checked e was not terminal yet.
func ApplyOutcome(e *Execution, o *Outcome, now time.Time) {
	e.Status = o.Status
	e.ErrorType = o.ErrorType
	e.Error = o.Error
	e.ExitCode = o.ExitCode
	e.Signal = o.Signal
	e.Result = o.Result
	if o.SessionID != "" {
		e.SessionID = o.SessionID
	}
	if o.NumTurns != 0 {
		e.NumTurns = o.NumTurns
	}
	if o.CostUSD != 0 {
		e.CostUSD = o.CostUSD
	}
	if len(o.Usage) > 0 {
		e.Usage = o.Usage
	}
	e.FinalizedBy = o.FinalizedBy
	e.Stdout, e.Stderr = o.Stdout, o.Stderr
	e.StdoutBytes, e.StderrBytes = o.StdoutBytes, o.StderrBytes
	e.OutputTruncated = o.OutputTruncated
	if o.LogNote != "" {
		e.LogNote = o.LogNote
	}
	if o.Containment != "" {
		e.Containment = o.Containment
	}
	if o.Sandbox != nil {
		e.Sandbox = o.Sandbox
	}
	if o.User != "" {
		e.User = o.User
	}
	e.Killed = o.Killed
	e.Reclaimed = o.Reclaimed
	e.FinishedAt = &now
	switch {
	case o.Duration > 0:
		e.DurationMS = o.Duration.Milliseconds()
	case e.StartedAt != nil:
		e.DurationMS = now.Sub(*e.StartedAt).Milliseconds()
	}
	e.SlotNo = 0
}
