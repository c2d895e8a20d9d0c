//go:build mutation_detachstays

// Mutant: A detached run's cgroup leaf stays in its supervisor's directory: its processes die when the supervisor exits.
// Guarantee: 2. nothing left behind (detach asked for)
// Caught: ./proc TestDetachedLeftoversOutliveTheirSupervisor

package proc

import "github.com/corralrun/corral/internal/cgroup"

// moveOut, mutated for the CI's mutation step (.ci/mutations): the leaf is
// not moved. Built only with the tag mutation_detachstays.
func moveOut(l *cgroup.Leaf) error { return nil }
