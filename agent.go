package corral

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
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
	// the template has none. The service refuses a template whose prompt
	// would land where options are parsed.
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
	// serve --pass-env). The service refuses to pass on its own secrets
	// (its token and database URL).
	PassEnv []string `json:"pass_env,omitempty"`
	// RunAs is the user the agent's tasks run as: a user name or a
	// numeric uid, resolved on the worker that runs the task. Empty means
	// the worker's default (corral serve --run-as), else the service's own
	// user. A worker started with --run-as runs no task as root or as
	// itself.
	RunAs string `json:"run_as,omitempty"`
	// Sandbox confines the agent's tasks (see Sandbox): the task's
	// working directory is the workspace, and the service's data
	// directory is never readable inside. The zero value runs them
	// unconfined.
	Sandbox Sandbox `json:"sandbox,omitzero"`

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
	// and SIGKILL; zero means 2 s, negative means none (SIGKILL at once:
	// "0" in the CLI and the web form, as everywhere in corral).
	Timeout      Duration `json:"timeout,omitempty"`
	StallTimeout Duration `json:"stall_timeout,omitempty"`
	IdleTimeout  Duration `json:"idle_timeout,omitempty"`
	Grace        Duration `json:"grace,omitempty"`
	// MaxOutput caps the bytes kept of each output stream in the execution
	// record (head and tail, with a line saying what was cut between
	// them); zero means 64 KiB, at most MaxOutputLimit. The full log is
	// in the execution's log file, up to the log's own size bound.
	MaxOutput int `json:"max_output,omitempty"`

	// The retry policy (see Retry): a run that fails for a reason in
	// RetryOn is run again as a new attempt, at most MaxAttempts in all.
	Retry
	// What the agent may spend, per run and per day or month (see
	// Budget).
	Budget
	// Webhooks receive the events of the agent's executions (see
	// Webhook); their secrets are write-only.
	Webhooks []Webhook `json:"webhooks,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Normalize fills the defaults of zero fields and reports what is invalid,
// in words a caller can act on. It checks the agent's own shape; the
// service adds the rules of the layers that run it (where a headless
// command takes its prompt, which variables may be passed on).
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
	}{{"timeout", a.Timeout}, {"stall_timeout", a.StallTimeout}, {"idle_timeout", a.IdleTimeout}} {
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
	if err := a.Retry.normalize(a.Kind); err != nil {
		return err
	}
	if err := a.Budget.normalize(); err != nil {
		return err
	}
	if err := normalizeWebhooks(a.Webhooks); err != nil {
		return err
	}
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

func containsAny(s, chars string) bool { return strings.ContainsAny(s, chars) }

// normalizeIdentity checks the fields that say who a task runs as and what
// it sees of the service: RunAs, PassEnv (sorted, without duplicates) and
// Sandbox.
func (a *Agent) normalizeIdentity() error {
	if err := ValidUser(a.RunAs); a.RunAs != "" && err != nil {
		return fmt.Errorf("run_as: %w", err)
	}
	for _, n := range a.PassEnv {
		if err := ValidEnvName(n); err != nil {
			return fmt.Errorf("pass_env: %w", err)
		}
	}
	if len(a.PassEnv) == 0 {
		a.PassEnv = nil
	} else {
		slices.Sort(a.PassEnv)
		a.PassEnv = slices.Compact(a.PassEnv)
	}
	if err := a.Sandbox.Validate(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// ValidUser checks a user name or numeric uid as RunAs takes it: 1 to 64
// letters, digits, '_', '-' or '.', not starting with '-'.
func ValidUser(s string) error {
	if s == "" || len(s) > 64 {
		return errors.New("a user name must be 1 to 64 characters")
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' && i > 0
		if !ok {
			return fmt.Errorf("user %q may hold only letters, digits, '_', '.' and '-' (not first)", s)
		}
	}
	return nil
}

// ValidEnvName checks the name of a variable that may be passed on from
// the service's environment: a shell variable name (letters, digits and
// '_', not starting with a digit) of at most 256 bytes.
func ValidEnvName(name string) error {
	if name == "" || len(name) > 256 {
		return fmt.Errorf("variable name %q must be 1 to 256 characters", name)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || r >= '0' && r <= '9' && i > 0
		if !ok {
			return fmt.Errorf("variable name %q may hold only letters, digits and '_' (not a digit first)", name)
		}
	}
	return nil
}
