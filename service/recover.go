package service

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
	"github.com/corralrun/corral/service/internal/executor"
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
		if err := s.recoverWorker(ctx, w); err != nil {
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

// recoverWorker interrupts the runs of the dead worker w and forgets it.
func (s *Service) recoverWorker(ctx context.Context, w *store.Worker) error {
	runs, err := s.st.RunningOn(ctx, w.ID)
	if err != nil {
		return err
	}
	for _, r := range runs {
		if err := s.interrupt(ctx, w, r); err != nil {
			return err
		}
	}
	return s.st.DeleteWorker(ctx, w.ID)
}

// interrupt kills what is left of e's tree and records it as interrupted.
func (s *Service) interrupt(ctx context.Context, w *store.Worker, e *store.Run) error {
	killed := 0
	var kerr error
	if s.ident.SameMachine(w) {
		if h, ok := recordedHandle(e); ok {
			killed, kerr = proc.Reclaim(ctx, h)
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
		msg = fmt.Sprintf("the worker running it (%s) stopped renewing its lease; its processes were on another machine, which kills them when it comes back or finds its lease lost", w.ID)
	}
	o := &corral.Outcome{
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
	a, err := s.st.GetAgent(ctx, e.Agent)
	if err != nil || mutant.NoRecoveryRetry {
		a = nil // gone: nothing to retry it for
	}
	return s.finish(e.Execution, o, a, nil)
}

// recordedHandle returns the handle of r's process tree: the one its
// worker recorded, else the cgroup leaf proc made for it, when the worker
// died before it could record one.
func recordedHandle(r *store.Run) (proc.Handle, bool) {
	var h proc.Handle
	if len(r.Handle) > 0 && json.Unmarshal(r.Handle, &h) == nil {
		return h, true
	}
	return proc.FindLabelled(executor.Label(r.ID))
}

// runFile is what a worker keeps in DataDir/runs/ID.json while a run of
// its lives, so that the next worker on this machine and data directory
// can kill the run's tree if this one dies, even when a worker elsewhere
// already recorded the run as interrupted (it could not kill processes
// here).
type runFile struct {
	ExecutionID string      `json:"execution_id"`
	WorkerID    string      `json:"worker_id"`
	Pid         int         `json:"pid"`
	PidStart    uint64      `json:"pid_start,omitempty"`
	BootID      string      `json:"boot_id,omitempty"`
	Handle      proc.Handle `json:"handle"`
}

// runFileDelay is how long a run lives before its run file is written.
// Creating a file is the largest cost of a trivial task on a real disk, and
// the file guards against a triple fault only (this worker dead, the init
// or guardian that kills its trees with it dead too, and another worker
// recording the run first, which takes a lease); a run that ends sooner
// never needs it, and one that has not ended by then gets it.
const runFileDelay = time.Second

// runFileLater writes a run's file once the run has lived runFileDelay,
// and removes it at the run's end if it was written.
type runFileLater struct {
	mu      sync.Mutex
	t       *time.Timer
	written bool
	ended   bool
}

func (r *runFileLater) startLater(s *Service, id string, h proc.Handle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t = time.AfterFunc(runFileDelay, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.ended {
			s.writeRunFile(id, h)
			r.written = true
		}
	})
}

func (r *runFileLater) end(s *Service, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	if r.t != nil {
		r.t.Stop()
	}
	if r.written {
		os.Remove(s.runFilePath(id))
	}
}

func (s *Service) runFilePath(id string) string { return filepath.Join(s.runDir, id+".json") }

func (s *Service) writeRunFile(id string, h proc.Handle) {
	b, _ := json.Marshal(runFile{ExecutionID: id, WorkerID: s.id, Pid: s.ident.Pid, PidStart: s.ident.PidStart, BootID: s.ident.BootID, Handle: h})
	if err := os.WriteFile(s.runFilePath(id), b, 0o600); err != nil {
		s.log.Warn("could not record the run's handle locally", "execution", id, "err", err)
	}
}

// reclaimOrphans kills the trees of runs that a dead worker of this data
// directory left on this machine, by their recorded handles.
func (s *Service) reclaimOrphans(ctx context.Context) {
	ents, err := os.ReadDir(s.runDir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		path := filepath.Join(s.runDir, ent.Name())
		b, err := os.ReadFile(path)
		var rf runFile
		if err != nil || json.Unmarshal(b, &rf) != nil {
			os.Remove(path)
			continue
		}
		if rf.Pid == s.ident.Pid || (rf.BootID == s.ident.BootID && recovery.Alive(rf.Pid, rf.PidStart)) {
			continue // a live worker shares this data directory
		}
		killed := 0
		if rf.BootID == s.ident.BootID {
			killed, err = proc.Reclaim(ctx, rf.Handle)
			if err != nil {
				s.log.Warn("could not reclaim an orphaned run", "execution", rf.ExecutionID, "err", err)
				continue
			}
		}
		if killed > 0 {
			s.log.Warn("killed the orphaned processes of a run of a dead worker", "execution", rf.ExecutionID, "worker", rf.WorkerID, "killed", killed)
			s.metrics.Add(mEscapees, float64(killed), nil)
		}
		os.Remove(path)
	}
}
