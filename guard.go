package corral

// GuardReport says what kept a run from the secrets of the service (or
// other program) that ran it: the task guard (docs/sandbox.md, "The task
// guard"). A record without one comes from a worker that does not guard
// its runs at all.
type GuardReport struct {
	// Mechanisms names what held the run: "pid namespace", "mount
	// namespace", "ipc namespace", "user namespace", "own /proc",
	// "private /dev", "no device nodes", "read-only kernel interfaces",
	// "hidden paths", "no_new_privs", "reduced capabilities" (a root run)
	// or "no capabilities"; or "sandbox", when the run's sandbox did all
	// of it. Empty when the run was not guarded.
	Mechanisms []string `json:"mechanisms,omitempty"`

	// Hidden lists the paths the run could not see (the service's data
	// directory among them), wherever they were mounted.
	Hidden []string `json:"hidden,omitempty"`

	// Capabilities lists what a root run kept; empty for any other user,
	// who keeps none.
	Capabilities []string `json:"capabilities,omitempty"`

	// Unguarded says why the run was not guarded: the guard is off on its
	// worker, or the machine cannot build it (and why). Empty when it was.
	Unguarded string `json:"unguarded,omitempty"`
}

// Guarded reports whether the run was guarded (by the guard or by its
// sandbox).
func (r *GuardReport) Guarded() bool { return r != nil && len(r.Mechanisms) > 0 }
