package service

import "github.com/corralrun/corral/proc"

// checkCapacity warns, as the worker starts, when this machine cannot
// hold MaxRuns runs at once: the warning names the limit (open files,
// processes, a cgroup's pids.max) that the runs would hit. A warning, not
// a refusal: the runs' commands, and so what each needs, are not known
// yet, and a worker seldom runs its maximum.
func (s *Service) checkCapacity() {
	n := s.cfg.MaxRuns
	if n <= 0 {
		n = 256
	}
	if err := proc.CheckCapacity(n, ""); err != nil {
		s.log.Warn("this worker cannot hold max_runs runs at once: runs past the limit will fail to start", "max_runs", n, "err", err)
	}
}
