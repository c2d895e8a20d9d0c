package mcpserver

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/shell"
)

// What the service's tools show a model of agents and executions: the
// API's records with their JSON names, cut to what a model can use, every
// text in them cleaned and bounded (shell.CleanForModel, ClipForModel).

// AgentView is an agent as list_agents shows it.
type AgentView struct {
	Name             string   `json:"name"`
	Kind             string   `json:"kind" jsonschema:"shell: the input is a command line; headless: the input is a prompt for a coding agent"`
	Command          []string `json:"command,omitempty" jsonschema:"a headless agent's command template"`
	Shell            string   `json:"shell,omitempty"`
	Workdir          string   `json:"workdir,omitempty"`
	Labels           []string `json:"labels,omitempty"`
	MaxParallelTasks int      `json:"max_parallel_tasks"`
	Overflow         string   `json:"overflow" jsonschema:"reject: a task submitted while every slot is taken is refused; queue: it waits for a slot"`
	MaxBacklog       int      `json:"max_backlog,omitempty"`
	Timeout          string   `json:"timeout,omitempty" jsonschema:"a run's default budget"`
	MaxAttempts      int      `json:"max_attempts,omitempty" jsonschema:"attempts per run, the first included"`
	RetryOn          []string `json:"retry_on,omitempty" jsonschema:"the error types that are retried"`
}

func agentView(a *client.Agent) AgentView {
	v := AgentView{
		Name: a.Name, Kind: string(a.Kind), Command: a.Command, Shell: a.Shell, Workdir: a.Workdir,
		Labels: a.Labels, MaxParallelTasks: a.MaxParallelTasks, Overflow: string(a.Overflow),
		MaxBacklog: a.MaxBacklog, MaxAttempts: a.MaxAttempts,
	}
	if a.Timeout > 0 {
		v.Timeout = time.Duration(a.Timeout).String()
	}
	for _, t := range a.RetryOn {
		v.RetryOn = append(v.RetryOn, string(t))
	}
	return v
}

// ExecutionView is an execution (one attempt of a run) as the tools show
// it.
type ExecutionView struct {
	ID              string   `json:"id" jsonschema:"the execution id of this attempt"`
	Agent           string   `json:"agent"`
	Status          string   `json:"status" jsonschema:"queued, waiting (a retry waiting for its time), running, succeeded, failed, cancelled, rejected or interrupted"`
	Finished        bool     `json:"finished" jsonschema:"the run is over: this attempt ended and no further attempt follows it"`
	Attempt         int      `json:"attempt,omitempty"`
	MaxAttempts     int      `json:"max_attempts,omitempty"`
	RetryOf         string   `json:"retry_of,omitempty" jsonschema:"the attempt this one retries"`
	RetriedBy       string   `json:"retried_by,omitempty" jsonschema:"the next attempt, when this one was retried"`
	RetryReason     string   `json:"retry_reason,omitempty"`
	NextAttemptAt   string   `json:"next_attempt_at,omitempty" jsonschema:"when a waiting attempt runs"`
	ErrorType       string   `json:"error_type,omitempty"`
	Error           string   `json:"error,omitempty"`
	ExitCode        *int     `json:"exit_code,omitempty"`
	Signal          string   `json:"signal,omitempty"`
	Result          string   `json:"result,omitempty" jsonschema:"a headless agent's final answer"`
	CostUSD         float64  `json:"cost_usd,omitempty" jsonschema:"this attempt's cost"`
	ChainCostUSD    float64  `json:"chain_cost_usd,omitempty" jsonschema:"the cost of this attempt and those before it"`
	NumTurns        int      `json:"num_turns,omitempty"`
	SessionID       string   `json:"session_id,omitempty"`
	Input           string   `json:"input,omitempty" jsonschema:"the task's input, cut short"`
	Stdout          string   `json:"stdout,omitempty"`
	Stderr          string   `json:"stderr,omitempty"`
	StdoutBytes     int64    `json:"stdout_bytes,omitempty"`
	StderrBytes     int64    `json:"stderr_bytes,omitempty"`
	Truncated       bool     `json:"truncated,omitempty" jsonschema:"result, stdout or stderr were cut: execution_logs reads the log"`
	CancelRequested bool     `json:"cancel_requested,omitempty"`
	CreatedAt       string   `json:"created_at,omitempty"`
	StartedAt       string   `json:"started_at,omitempty"`
	FinishedAt      string   `json:"finished_at,omitempty"`
	DurationMS      int64    `json:"duration_ms,omitempty"`
	Notes           []string `json:"notes,omitempty"`
}

// Bounds of the texts of a view outside its output budget.
const (
	errorChars = 2000 // an execution's error sentence
	inputChars = 300  // a task's input in a view
)

// runFinished reports whether e's run is over.
func runFinished(e *client.Execution) bool { return e.Status.Terminal() && e.RetriedBy == "" }

// executionView shows e within budget characters of result, stdout and
// stderr together; withInput keeps the task's input, cut short.
func executionView(e *client.Execution, budget int, withInput bool) ExecutionView {
	v := ExecutionView{
		ID: e.ID, Agent: e.Agent, Status: string(e.Status), Finished: runFinished(e),
		Attempt: e.Attempt, MaxAttempts: e.MaxAttempts, RetryOf: e.RetryOf, RetriedBy: e.RetriedBy,
		RetryReason: cut(e.RetryReason, errorChars), NextAttemptAt: stamp(e.NextAttemptAt),
		ErrorType: string(e.ErrorType), Error: cut(e.Error, errorChars), ExitCode: e.ExitCode, Signal: e.Signal,
		CostUSD: e.CostUSD, ChainCostUSD: e.ChainCostUSD, NumTurns: e.NumTurns, SessionID: e.SessionID,
		StdoutBytes: e.StdoutBytes, StderrBytes: e.StderrBytes, Truncated: e.OutputTruncated,
		CancelRequested: e.CancelRequested, CreatedAt: stamp(&e.CreatedAt), StartedAt: stamp(e.StartedAt),
		FinishedAt: stamp(e.FinishedAt), DurationMS: e.DurationMS,
	}
	if withInput {
		v.Input = cut(e.Input, inputChars)
	}
	result, out, errs := shell.CleanForModel(e.Result), shell.CleanForModel(e.Stdout), shell.CleanForModel(e.Stderr)
	rb := min(utf8.RuneCountInString(result), budget)
	ob, eb := shell.SplitBudget(utf8.RuneCountInString(out), utf8.RuneCountInString(errs), budget-rb)
	var cutR, cutO, cutE bool
	v.Result, cutR = shell.ClipForModel(result, rb)
	v.Stdout, cutO = shell.ClipForModel(out, ob)
	v.Stderr, cutE = shell.ClipForModel(errs, eb)
	v.Truncated = v.Truncated || cutR || cutO || cutE
	v.Notes = stateNotes(e)
	return v
}

// summaryView shows a listed execution (a summary: no output bodies).
func summaryView(e *client.Execution) ExecutionView {
	v := executionView(e, 0, true)
	v.Notes = nil
	return v
}

// stateNotes says what a model needs to know of where e stands.
func stateNotes(e *client.Execution) []string {
	switch {
	case e.RetriedBy != "":
		return []string{fmt.Sprintf("attempt %d ended %s and was retried as %s: wait_execution follows the run to its last attempt", e.Attempt, e.Status, e.RetriedBy)}
	case e.Status == corral.StatusWaiting:
		return []string{fmt.Sprintf("attempt %d of %d waits for its time (%s): wait_execution follows it", e.Attempt, e.MaxAttempts, stamp(e.NextAttemptAt))}
	case e.Status == corral.StatusQueued:
		return []string{"queued: every slot of agent " + e.Agent + " is taken; it runs when one frees"}
	}
	return nil
}

// AttemptView is one attempt of a run that a wait saw end.
type AttemptView struct {
	ID          string  `json:"id"`
	Attempt     int     `json:"attempt,omitempty"`
	Status      string  `json:"status"`
	ErrorType   string  `json:"error_type,omitempty"`
	Error       string  `json:"error,omitempty"`
	RetryReason string  `json:"retry_reason,omitempty"`
	CostUSD     float64 `json:"cost_usd,omitempty"`
}

func attemptView(e *client.Execution) AttemptView {
	return AttemptView{ID: e.ID, Attempt: e.Attempt, Status: string(e.Status), ErrorType: string(e.ErrorType),
		Error: cut(e.Error, inputChars), RetryReason: cut(e.RetryReason, inputChars), CostUSD: e.CostUSD}
}

// cut cleans s and cuts it to n characters.
func cut(s string, n int) string {
	out, _ := shell.ClipForModel(shell.CleanForModel(s), n)
	return out
}

// stamp formats a time of a record; "" for none.
func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// viewSize is how many characters v takes in a result.
func viewSize(v any) int {
	b, _ := json.Marshal(v)
	return utf8.RuneCount(b)
}
