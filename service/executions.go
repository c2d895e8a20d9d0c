package service

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service/internal/metrics"
	"github.com/corralrun/corral/store"
)

// Task is one task submitted to an agent.
type Task struct {
	Agent string
	// Input is the command line of a shell agent or the prompt of a
	// headless one.
	Input string
	// Timeout overrides the agent's budget for this run; zero keeps it.
	Timeout corral.Duration
}

// Submit admits a task in one atomic step and returns its execution:
// running (it holds a slot and will start at once) or queued. A task
// refused because the agent is at capacity is recorded as rejected and
// returned with a *RejectedError (errors.Is ErrAtCapacity), whose message
// is "agent at capacity (N/N parallel tasks running)".
func (s *Service) Submit(ctx context.Context, t Task) (*corral.Execution, error) {
	return s.submit(ctx, &store.Submission{Agent: t.Agent, Input: t.Input, Timeout: t.Timeout, Trigger: corral.TriggerAPI}, nil)
}

// submit admits sub; when the service traces, its span is a child of
// ctx's, else of the trace of the run prev (a retry's), else a new trace.
func (s *Service) submit(ctx context.Context, sub *store.Submission, prev *corral.Execution) (e *corral.Execution, err error) {
	if s.isClosed() {
		return nil, ErrClosed
	}
	if err := checkInput(sub.Input, sub.Timeout); err != nil {
		return nil, err
	}
	tr := s.startSubmit(ctx, sub, prev, false)
	defer func() { tr.end(e, err) }()
	start := time.Now()
	adm, err := s.st.Submit(ctx, sub)
	if err != nil {
		return nil, err
	}
	s.metrics.Observe(mAdmission, time.Since(start).Seconds(), nil)
	s.changed()
	e = adm.Execution
	if e.Status == corral.StatusRejected {
		s.metrics.Add(mRejected, 1, metrics.Labels{"agent", e.Agent})
		s.metrics.Add(mFinished, 1, metrics.Labels{"agent", e.Agent, "status", string(e.Status)})
		return e, &RejectedError{Execution: e, RetryAt: adm.RetryAt}
	}
	return e, nil
}

func checkInput(input string, timeout corral.Duration) error {
	switch {
	case input == "":
		return invalid("input is empty: give the command line (shell agents) or the prompt (headless agents)")
	case len(input) > DefaultMaxInput:
		return invalid("input is %d bytes; the limit is %d", len(input), DefaultMaxInput)
	case !utf8.ValidString(input):
		return invalid("input is not valid UTF-8")
	case timeout < 0:
		return invalid("timeout must not be negative")
	}
	return nil
}

// Execution returns the execution id.
func (s *Service) Execution(ctx context.Context, id string) (*corral.Execution, error) {
	return s.st.GetExecution(ctx, id)
}

// ExecutionFilter selects executions; see store.ExecutionFilter.
type ExecutionFilter = store.ExecutionFilter

// Executions returns a page of executions, newest first, as summaries
// (no output bodies, input and error cut: see Execution.Summary), and
// the cursor of the next page ("" when this is the last).
func (s *Service) Executions(ctx context.Context, f ExecutionFilter) ([]*corral.Execution, string, error) {
	list, next, err := s.st.ListExecutions(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return list, next, err
}

// Cancel cancels an execution. A queued one (or one admitted but not yet
// started) is cancelled at once. A running one is stopped gracefully
// (SIGTERM for shell agents, SIGINT for headless ones, then SIGKILL after
// the agent's grace), by this worker or, through the database, by the
// worker that runs it; it is recorded as cancelled once its tree is gone,
// unless it finished by itself first. Cancelling any attempt of a run
// cancels the run: its latest attempt (a retry waiting for its time is
// cancelled at once). Cancel returns that attempt as it stands, and
// ErrConflict for a run already finished.
func (s *Service) Cancel(ctx context.Context, id string) (*corral.Execution, error) {
	first, err := s.st.GetExecution(ctx, id)
	if err != nil {
		return nil, err
	}
	last, err := s.latestAttempt(ctx, first)
	if err != nil {
		return nil, err
	}
	id = last.ID
	e, err := s.st.RequestCancel(ctx, id, time.Now().UTC())
	if err != nil {
		return e, err
	}
	s.changed()
	if e.Status.Terminal() {
		s.metrics.Add(mFinished, 1, metrics.Labels{"agent", e.Agent, "status", string(e.Status)})
		s.hub.Notify(id)
		return e, nil
	}
	s.stopLocal(id)
	return e, nil
}

// Retry submits the input of a finished execution again, as a new
// execution with trigger "retry" and the next attempt number.
func (s *Service) Retry(ctx context.Context, id string) (*corral.Execution, error) {
	prev, err := s.st.GetExecution(ctx, id)
	if err != nil {
		return nil, err
	}
	if !prev.Status.Terminal() {
		return prev, fmt.Errorf("execution %s is still %s; retry it once it has finished: %w", id, prev.Status, ErrConflict)
	}
	return s.submit(ctx, &store.Submission{Agent: prev.Agent, Input: prev.Input, Timeout: prev.Timeout, Trigger: corral.TriggerRetry, RetryOf: prev.ID, Attempt: prev.Attempt + 1}, prev)
}

// Slots returns the slots an agent holds now.
func (s *Service) Slots(ctx context.Context, agent string) ([]corral.Slot, error) {
	return s.st.Slots(ctx, agent)
}
