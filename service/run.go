package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/redact"
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
	e, err := s.st.Claim(ctx, id, s.id, time.Now().UTC(), logPath)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		s.hub.Notify(id)
		return nil // a duplicate dispatch, or cancelled before it started
	}
	if err != nil {
		return fmt.Errorf("%w: claim: %v", store.ErrNotReady, err) // offered again later
	}
	s.changed()
	s.hub.Notify(id)
	ctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
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
		run.Fence() // claimed while the lease is lost: do not start it
	}

	a, err := s.st.GetAgent(ctx, e.Agent)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.finish(e, &store.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: "agent " + e.Agent + " no longer exists"}, nil)
	case err != nil:
		return s.finish(e, &store.Outcome{Status: corral.StatusInterrupted, ErrorType: corral.ErrorInterrupted, Error: "could not read the agent before starting: " + err.Error()}, nil)
	}
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
	logs := newLogStreams(red, lw)
	timeout := e.Timeout.D()
	if timeout == 0 {
		timeout = a.Timeout.D()
	}
	maxOut := a.MaxOutput
	if maxOut == 0 {
		maxOut = DefaultMaxOutput
	}
	var rf runFileLater
	job := &executor.Job{
		Agent:     a,
		Execution: e,
		Env:       s.cfg.Env,
		Timeout:   timeout,
		Stop:      run.stop,
		MaxOutput: maxOut,
		OnStart: func(h proc.Handle) {
			// Recorded before the run is waited on: from here on a
			// crash of this worker leaves a tree recovery can kill.
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rf.startLater(s, id, h)
			if err := s.st.SetRunInfo(rctx, id, s.id, &store.Execution{Handle: &h}); err != nil {
				s.log.Warn("could not record the process handle", "execution", id, "err", err)
			}
			lw.Write("system", fmt.Appendf(nil, "started: pid %d, containment %s", h.Pid, h.Containment))
		},
		OnLine: logs.line,
		OnSalvage: func(session string) {
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.st.SetRunInfo(rctx, id, s.id, &store.Execution{SessionID: session})
		},
	}
	ex := s.execs[a.Kind]
	if ex == nil {
		lw.Close()
		return s.finish(e, &store.Outcome{Status: corral.StatusFailed, ErrorType: corral.ErrorStart, Error: "no executor for agent kind " + string(a.Kind)}, nil)
	}
	res, _ := ex.Run(ctx, job)
	treeGone := time.Now()
	logs.close()
	rf.end(s, id)
	lw.Write("system", fmt.Appendf(nil, "ended: %s", res.Status))
	lw.Close()
	if n := lw.Note(); n != "" {
		logNote = n
	}
	o := &store.Outcome{
		Status:      res.Status,
		ErrorType:   res.ErrorType,
		Error:       red.String(res.Error),
		ExitCode:    res.ExitCode,
		Signal:      res.Signal,
		Result:      red.String(res.Result),
		SessionID:   res.SessionID,
		NumTurns:    res.NumTurns,
		CostUSD:     res.CostUSD,
		Usage:       res.Usage,
		FinalizedBy: res.FinalizedBy,
		StdoutBytes: res.Stdout.Bytes,
		StderrBytes: res.Stderr.Bytes,
		LogNote:     logNote,
		Containment: res.Containment,
		Sandbox:     res.Sandbox,
		User:        res.User,
		Killed:      res.Killed,
		Duration:    res.Duration,
	}
	var cut1, cut2 bool
	o.Stdout, cut1 = boundOutput(red.String(res.Stdout.Text()), maxOut)
	o.Stderr, cut2 = boundOutput(red.String(res.Stderr.Text()), maxOut)
	o.OutputTruncated = res.Stdout.Truncated || res.Stderr.Truncated || cut1 || cut2
	if run.fenced.Load() && res.Status == corral.StatusInterrupted {
		o.Error = fmt.Sprintf("this worker (%s) could not renew its lease in time, so it stopped the run: the fleet records the runs of a worker it cannot reach as interrupted", s.id)
	}
	if res.Killed > 0 {
		s.metrics.Add(mKilled, float64(res.Killed), nil)
	}
	return s.finish(e, o, &treeGone)
}

// finish writes the terminal state. A run that ended must not stay
// running: while the store refuses the write (a full disk, a lost or
// locked database), finish keeps trying, backing off to a try every two
// seconds, for as long as this worker lives; meanwhile the worker reports
// not ready and takes no new work (unrecorded), and if it must stop
// first, it keeps its worker record so that recovery finds the run.
// treeGone, when known, is when the run's process tree was gone, for the
// slot release latency.
func (s *Service) finish(e *store.Execution, o *store.Outcome, treeGone *time.Time) error {
	if o.FinishedAt.IsZero() {
		o.FinishedAt = time.Now().UTC()
	}
	var fe *store.Execution
	var applied bool
	var err error
	for d := 10 * time.Millisecond; ; d = min(d*2, 2*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		fe, applied, err = s.st.Finish(ctx, e.ID, o)
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
			s.log.Error("gave up recording the end of a run; the worker's record is kept for recovery", "execution", e.ID, "err", err)
			return fmt.Errorf("record end of execution %s: %w", e.ID, err)
		}
	}
	s.paid(e.ID)
	s.hub.Notify(e.ID)
	s.changed()
	if treeGone != nil {
		d := time.Since(*treeGone)
		s.metrics.Observe(mRelease, d.Seconds(), nil)
		if s.cfg.OnSlotReleased != nil {
			s.cfg.OnSlotReleased(e.ID, d)
		}
	}
	if applied {
		s.metrics.Add(mFinished, 1, metrics.Labels{"agent", fe.Agent, "status", string(fe.Status)})
		if fe.DurationMS > 0 {
			s.metrics.Observe(mDuration, float64(fe.DurationMS)/1000, metrics.Labels{"agent", fe.Agent})
		}
	}
	return nil
}
