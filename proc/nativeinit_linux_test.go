package proc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/initelf"
	"github.com/corralrun/corral/internal/shim"
	"github.com/corralrun/corral/proc"
)

// TestPlainRunsHaveTheNativeInit: on linux/amd64 a plain run of the
// subreaper and process-group tiers is held by the native init
// (internal/initelf), not a Go program: its command's parent is the
// sealed memory file corral-init. A sandboxed run keeps the Go init.
func TestPlainRunsHaveTheNativeInit(t *testing.T) {
	if initelf.Image() == nil {
		t.Skip("SKIP: no native init for this architecture")
	}
	for _, tier := range []corral.Containment{corral.ContainmentSubreaper, corral.ContainmentProcessGroup} {
		t.Run(string(tier), func(t *testing.T) {
			res, err := proc.Run(context.Background(), &proc.Spec{
				Args:        []string{"sh", "-c", `readlink /proc/$PPID/exe; cat /proc/$PPID/comm`},
				Containment: tier,
			})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Stdout.Text())
			if !strings.Contains(out, "memfd:corral-init") || !strings.Contains(out, shim.Comm) {
				t.Fatalf("the command's parent is %q, want the native init (memfd:corral-init, named %s)", out, shim.Comm)
			}
		})
	}
}

// TestGoInitHoldsTheEscapeMatrix: the Go init, which still holds
// sandboxed runs, enclosures, other users' runs and the runs of machines
// without a native init, holds every escape scenario of the plain tiers
// as the native one does (TestRunHoldsTheDeadlineAndLeavesNothing).
func TestGoInitHoldsTheEscapeMatrix(t *testing.T) {
	// Idle inits are let go on both sides: none of the other kind serves.
	shim.UseGoInitOnly(true)
	proc.ForgetStarts()
	defer func() {
		shim.UseGoInitOnly(false)
		proc.ForgetStarts()
	}()
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:        []string{"sh", "-c", `readlink /proc/$PPID/exe`},
		Containment: corral.ContainmentSubreaper,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stdout.Text()); strings.Contains(out, "memfd:corral-init") {
		t.Fatalf("the command's parent is %q with the Go init asked for", out)
	}
	var h hiccups
	escapeMatrix(t, &h)
	h.verdict(t)
}
