package service

import (
	"context"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service/internal/recovery"
	"github.com/corralrun/corral/service/internal/runlog"
	"github.com/corralrun/corral/store"
)

// recoverDead finds dead workers and cleans up after them: their process
// trees killed (only those on this machine and boot, by cgroup or by pid
// and start time, never by name), their runs recorded as interrupted with
// the output they had logged, their slots freed (which starts queued
// work), their dispatches that never ran handed out again.
func (s *Service) recoverDead(ctx context.Context, startup bool) error {
	workers, err := s.st.Workers(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	recovered := false
	for _, w := range workers {
		if w.ID == s.id || !s.ident.Dead(w, now, s.cfg.Lease) {
			continue
		}
		s.log.Info("recovering runs of a dead worker", "worker", w.ID)
		for {
			list, _, err := s.st.ListExecutions(ctx, store.ExecutionFilter{WorkerID: w.ID, Statuses: []corral.Status{corral.StatusRunning}, Limit: 1000})
			if err != nil {
				return err
			}
			for _, e := range list {
				if err := s.interrupt(ctx, w, e); err != nil {
					return err
				}
			}
			if len(list) < 1000 {
				break
			}
		}
		if err := s.st.DeleteWorker(ctx, w.ID); err != nil {
			return err
		}
		recovered = true
	}
	// Dispatches claimed by the engine of a dead worker but never claimed
	// by the service would wait for the engine's rescue; hand them out
	// again now (a duplicate is harmless: one claim wins).
	before := now.Add(-DefaultRedispatch)
	if recovered || startup {
		before = now
	}
	un, err := s.st.Unclaimed(ctx, before)
	if err != nil {
		return err
	}
	for _, e := range un {
		s.st.Redispatch(ctx, e.ID)
	}
	return nil
}

// interrupt kills what is left of e's tree and records it as interrupted.
func (s *Service) interrupt(ctx context.Context, w *store.Worker, e *store.Execution) error {
	killed := 0
	var kerr error
	if s.ident.SameMachine(w) {
		h := e.Handle
		if h == nil {
			if leaf := recovery.FindLeaf("exec-" + e.ID); leaf != "" {
				h = &proc.Handle{Cgroup: leaf, Containment: corral.ContainmentCgroup}
			}
		}
		if h != nil {
			killed, kerr = proc.Reclaim(ctx, *h)
		}
	}
	maxOut := DefaultMaxOutput / 2
	stdout, stderr := "", ""
	if e.LogPath != "" {
		stdout, stderr = runlog.Tail(e.LogPath, maxOut)
	}
	msg := fmt.Sprintf("the worker running it (%s) died; %d processes of its tree were killed on recovery", w.ID, killed)
	if kerr != nil {
		msg += fmt.Sprintf(" (reclaim error: %v)", kerr)
	}
	if !s.ident.SameMachine(w) {
		msg = fmt.Sprintf("the worker running it (%s) stopped renewing its lease; its processes were on another machine", w.ID)
	}
	o := &store.Outcome{
		Status:      corral.StatusInterrupted,
		ErrorType:   corral.ErrorInterrupted,
		Error:       msg,
		SessionID:   e.SessionID,
		Stdout:      stdout,
		Stderr:      stderr,
		Containment: e.Containment,
		Reclaimed:   killed,
		FinalizedBy: "recovery",
	}
	if e.CancelRequested {
		o.Status = corral.StatusCancelled
		o.ErrorType = corral.ErrorCancelled
	}
	if killed > 0 {
		s.metrics.Add(mEscapees, float64(killed), nil)
	}
	return s.finish(e, o, nil)
}
