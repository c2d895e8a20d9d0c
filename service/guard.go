package service

import (
	"fmt"
	"path/filepath"

	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/proc"
)

// GuardMode says whether a worker keeps its runs from its own secrets with
// the task guard (proc.Guard, docs/sandbox.md): each run not sandboxed
// gets pid, mount and IPC namespaces of its own (the service's processes,
// and so its environment, memory and descriptors, are out of its sight),
// the data directory and Config.Hide hidden wherever they are mounted, no
// device but the harmless ones, the kernel's interfaces read-only, and as
// root only proc.GuardCapabilities.
type GuardMode string

const (
	// GuardAuto (the zero value) guards every run where this machine can
	// build the guard; where it cannot, runs are not guarded, Guarded
	// says why, and so does each execution (Outcome.Guard.Unguarded).
	GuardAuto GuardMode = ""
	// GuardOn guards every run: New fails, saying what is missing, on a
	// machine that cannot build the guard.
	GuardOn GuardMode = "on"
	// GuardOff guards no run: tasks that need the machine itself (mount,
	// devices, tracing, CAP_SYS_ADMIN) on a worker whose operator trusts
	// every task with the service's secrets.
	GuardOff GuardMode = "off"
)

// String returns the mode's name; the zero value prints as "auto".
func (m GuardMode) String() string {
	if m == GuardAuto {
		return "auto"
	}
	return string(m)
}

// ParseGuardMode parses "auto", "on" or "off".
func ParseGuardMode(s string) (GuardMode, error) {
	switch s {
	case "auto", "":
		return GuardAuto, nil
	case "on", "off":
		return GuardMode(s), nil
	}
	return "", fmt.Errorf("unknown task guard %q: want auto, on or off", s)
}

// guardFor decides whether the runs of a worker of cfg are guarded, and
// says why not when they are not; it fails for GuardOn on a machine that
// cannot build the guard.
func guardFor(cfg *Config) (on bool, unguarded string, err error) {
	mode := cfg.Guard
	if mode == GuardAuto && mutant.GuardOffByDefault {
		mode = GuardOff
	}
	switch mode {
	case GuardOff:
		return false, "the task guard is off on this worker", nil
	case GuardAuto, GuardOn:
	default:
		return false, "", fmt.Errorf("service: task guard %q: want auto, on or off", string(cfg.Guard))
	}
	if perr := proc.ProbeGuard(); perr != nil {
		if cfg.Guard == GuardOn {
			return false, "", fmt.Errorf("service: the task guard is on but cannot be built here: %w", perr)
		}
		return false, "this machine cannot build the task guard: " + perr.Error(), nil
	}
	for _, h := range cfg.Hide {
		if !filepath.IsAbs(h) {
			return false, "", fmt.Errorf("service: hidden path %q is not absolute", h)
		}
	}
	return true, "", nil
}

// Guarded reports whether this worker guards its runs (see GuardMode) and,
// when it does not, why.
func (s *Service) Guarded() (bool, string) { return s.guardOn, s.unguarded }
