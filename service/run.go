package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/redact"
	"github.com/corralrun/corral/internal/setting"
	"github.com/corralrun/corral/internal/tracing"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service/internal/executor"
	"github.com/corralrun/corral/service/internal/metrics"
	"github.com/corralrun/corral/service/internal/runlog"
	"github.com/corralrun/corral/store"
)

// runExecution is the job engine's work function: claim the execution,
// run it, write its terminal state.
func (s *Service) runExecution(ctx context.Context, id string) error {
	if err := s.unrecorded(); err != nil {
		// The store refuses this worker's writes: take no new work until
		// the ends it owes are recorded.
		return fmt.Errorf("%w: %v", store.ErrNotReady, err)
	}
	logPath := filepath.Join(s.logDir, id+".jsonl")
	claimed := time.Now().UTC()
	r, err := s.st.Claim(ctx, id, s.id, claimed, logPath)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		s.hub.Notify(id)
		return nil // a duplicate dispatch, or cancelled before it started
	}
	if err != nil {
		return fmt.Errorf("%w: claim: %v", store.ErrNotReady, err) // offered again later
	}
	e := r.Execution
	s.changed()
	s.hub.Notify(id)
	ctx, tr := s.startExecution(ctx, r, claimed)
	ctx, interrupt := context.WithCancelCause(ctx)
	defer interrupt(nil)
	run := &localRun{stop: make(chan struct{}), interrupt: interrupt}
	s.mu.Lock()
	s.runs[id] = run
	fenced := s.leaseLost
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.runs, id)
		s.mu.Unlock()
	}()
	if fenced {
		run.Fence(s.id) // claimed while the lease is lost: do not start it
	}
	a, err := s.st.GetAgent(ctx, e.Agent)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.finish(e, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: "agent " + e.Agent + " no longer exists"}, nil, nil, tr)
	case err != nil:
		return s.finish(e, &corral.Outcome{Status: corral.StatusInterrupted, ErrorType: corral.ErrorInterrupted, Error: "could not read the agent before starting: " + err.Error()}, nil, nil, tr)
	}
	ex := s.execs[a.Kind]
	if ex == nil {
		return s.finish(e, &corral.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: "no executor for agent kind " + string(a.Kind)}, a, nil, tr)
	}
	o, treeGone := s.supervise(ctx, ex, a, e, logPath, run)
	if o.Killed > 0 {
		s.metrics.Add(mKilled, float64(o.Killed), nil)
	}
	return s.finish(e, o, a, &treeGone, tr)
}

// supervise runs e of agent a with ex, its output logged to logPath and
// redacted, and returns its outcome as it will be recorded, and when its
// process tree was gone.
func (s *Service) supervise(ctx context.Context, ex executor.Executor, a *corral.Agent, e *corral.Execution, logPath string, run *localRun) (*corral.Outcome, time.Time) {
	id := e.ID
	lw, err := runlog.Create(logPath, id, s.hub, s.cfg.MaxLogBytes)
	logNote := ""
	if err != nil {
		// The run goes on without its log (its record keeps the head and
		// tail of its output); failing it would drain the queue into
		// failures while the directory is unwritable.
		s.log.Warn("running without a log", "execution", id, "err", err)
		logNote = fmt.Sprintf("no log: %v", err)
		lw = nil
	}
	red := redact.New(secretValues(a.Env, s.cfg.Env, s.cfg.Secrets)...)
	if s.cfg.TraceContent {
		ctx = tracing.WithContent(ctx, red)
	}
	logs := newLogStreams(red, lw)
	timeout := e.Timeout.D()
	if timeout == 0 {
		timeout = a.Timeout.D()
	}
	maxOut := setting.Or(a.MaxOutput, DefaultMaxOutput)
	var rf runFileLater
	spend := &runSpend{s: s, a: a, id: id, note: func(text string) { lw.Write("system", []byte(text)) }}
	job := &executor.Job{
		Agent:       a,
		Execution:   e,
		Env:         s.cfg.Env,
		Timeout:     timeout,
		Stop:        run.stop,
		MaxOutput:   maxOut,
		FlushWindow: s.cfg.FlushWindow,
		OnStart: func(h proc.Handle) {
			// Recorded before the run is waited on: from here on a
			// crash of this worker leaves a tree recovery can kill.
			rf.startLater(s, id, h)
			hb, _ := json.Marshal(h)
			s.setRunInfo(id, store.RunInfo{Handle: hb, Containment: h.Containment})
			lw.Write("system", fmt.Appendf(nil, "started: pid %d, containment %s", h.Pid, h.Containment))
		},
		OnLine:    logs.line,
		Sessions:  s.st,
		OnSpend:   spend.spent,
		OnSalvage: func(session string) { s.setRunInfo(id, store.RunInfo{SessionID: session}) },
	}
	o := ex.Run(ctx, job)
	treeGone := time.Now()
	logs.close()
	rf.end(s, id)
	lw.Write("system", fmt.Appendf(nil, "ended: %s", o.Status))
	lw.Close()
	if n := lw.Note(); n != "" {
		logNote = n
	}
	o.LogNote = logNote
	o.Error, o.Result = red.String(o.Error), red.String(o.Result)
	var cut1, cut2 bool
	o.Stdout, cut1 = boundOutput(red.String(o.Stdout), maxOut)
	o.Stderr, cut2 = boundOutput(red.String(o.Stderr), maxOut)
	o.OutputTruncated = o.OutputTruncated || cut1 || cut2
	return o, treeGone
}

// setRunInfo records info of this worker's running execution id, logging
// a failure: the run goes on without it.
func (s *Service) setRunInfo(id string, info store.RunInfo) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.st.SetRunInfo(ctx, id, s.id, info); err != nil {
		s.log.Warn("could not record what the run has revealed so far", "execution", id, "err", err)
	}
}

// finish writes the terminal state, and the run's next attempt when the
// retry policy of its agent a (nil: none) says so. A run that ended must not stay
// running: while the store refuses the write (a full disk, a lost or
// locked database), finish keeps trying, backing off to a try every two
// seconds, for as long as this worker lives; meanwhile the worker reports
// not ready and takes no new work (unrecorded), and if it must stop
// first, it keeps its worker record so that recovery finds the run.
// treeGone, when known, is when the run's process tree was gone, for the
// slot release latency. tr, the execution's span, ends with the record.
func (s *Service) finish(e *corral.Execution, o *corral.Outcome, a *corral.Agent, treeGone *time.Time, tr execTrace) error {
	if o.Ended.IsZero() {
		o.Ended = time.Now().UTC()
	}
	next := nextAttempt(a, e, o, o.Ended)
	var fe *corral.Execution
	var applied bool
	var err error
	for d := 10 * time.Millisecond; ; d = min(d*2, 2*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		fe, applied, err = s.st.Finish(ctx, e.ID, o, next)
		cancel()
		if err == nil {
			break
		}
		s.owe(e.ID, err)
		s.log.Warn("could not record the end of a run; retrying", "execution", e.ID, "err", err)
		t := time.NewTimer(d)
		select {
		case <-s.giveUp:
		case <-t.C:
		}
		t.Stop()
		if s.gaveUp() {
			tr.end(nil, o)
			s.log.Error("gave up recording the end of a run; the worker's record is kept for recovery", "execution", e.ID, "err", err)
			return fmt.Errorf("record end of execution %s: %w", e.ID, err)
		}
	}
	s.paid(e.ID)
	tr.end(fe, o)
	s.hub.Notify(e.ID)
	s.changed()
	if treeGone != nil {
		d := time.Since(*treeGone)
		s.metrics.Observe(mRelease, d.Seconds(), nil)
		if s.cfg.OnSlotReleased != nil {
			s.cfg.OnSlotReleased(e.ID, d)
		}
	}
	if applied && next != nil {
		s.wakeScheduler() // its attempt may be due at once
	}
	if applied {
		s.metrics.Add(mFinished, 1, metrics.Labels{"agent", fe.Agent, "status", string(fe.Status)})
		if fe.DurationMS > 0 {
			s.metrics.Observe(mDuration, float64(fe.DurationMS)/1000, metrics.Labels{"agent", fe.Agent})
		}
	}
	return nil
}
