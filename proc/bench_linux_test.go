package proc_test

import (
	"context"
	"os/exec"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/proc"
)

// BenchmarkSpawn compares Run of /bin/true under each tier, and with the
// task guard, with os/exec's exec.Command("/bin/true").Run(), in the same
// run. Targets: at most 1.3× os/exec without a cgroup, 2× with one.
func BenchmarkSpawn(b *testing.B) {
	b.Run("os-exec", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	tiers := []corral.Containment{corral.ContainmentSubreaper, corral.ContainmentProcessGroup}
	if _, err := cgroup.Detect(); err == nil {
		tiers = append([]corral.Containment{corral.ContainmentCgroup}, tiers...)
	}
	for _, tier := range tiers {
		b.Run("corral-"+string(tier), func(b *testing.B) {
			spec := &proc.Spec{Args: []string{"/bin/true"}, Containment: tier}
			for b.Loop() {
				res, err := proc.Run(context.Background(), spec)
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
	b.Run("corral-guard", func(b *testing.B) {
		if err := proc.ProbeGuard(); err != nil {
			b.Skip(err)
		}
		spec := &proc.Spec{Args: []string{"/bin/true"}, Guard: &proc.Guard{Hide: []string{b.TempDir()}}}
		for b.Loop() {
			res, err := proc.Run(context.Background(), spec)
			if err != nil || res.ExitCode != 0 || !res.Guard.Guarded() {
				b.Fatal(err, res)
			}
		}
	})
}
