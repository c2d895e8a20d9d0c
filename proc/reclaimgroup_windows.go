package proc

// reclaimGroup has nothing to do on Windows: the run's Job Object had
// kill-on-close, and its only handle was the supervisor's, so the system
// terminated the tree when the supervisor died. Processes that the run
// detached (LeftoversDetach) were meant to outlive it and are left alone.
func reclaimGroup(int) (int, error) { return 0, nil }
