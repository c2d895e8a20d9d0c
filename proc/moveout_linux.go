//go:build !mutation_detachstays

package proc

import "github.com/corralrun/corral/internal/cgroup"

// moveOut takes a detached run's leaf out of this process's cgroup
// directory, whose processes its guardian kills when it goes.
func moveOut(l *cgroup.Leaf) error { return l.MoveOut() }
