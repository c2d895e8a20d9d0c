package service

import (
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// checkCapacity warns, as the worker starts, when this machine cannot
// hold MaxRuns runs at once: the warning names the limit (open files,
// processes, a cgroup's pids.max) that the runs would hit. It counts what
// a shell task's run holds on this worker (an init's socket when the
// task guard is on); the run's log file is open only while a batch of
// its output is written, not for the run's life. A warning, not a
// refusal: the runs' commands, and so what each needs, are not known yet,
// and a worker seldom runs its maximum.
func (s *Service) checkCapacity() {
	n := s.cfg.MaxRuns
	if n <= 0 {
		n = 256
	}
	spec := &proc.Spec{}
	if s.guardOn && !mutant.CapacityGuardBlind {
		spec.Guard = &proc.Guard{}
	}
	if err := proc.CheckCapacityFor(n, spec); err != nil {
		s.log.Warn("this worker cannot hold max_runs runs at once: runs past the limit will fail to start", "max_runs", n, "err", err)
	}
}
