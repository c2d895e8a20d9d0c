package proc_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/cgroup"
	"github.com/corralrun/corral/internal/guardelf"
	"github.com/corralrun/corral/proc"
)

// firstRunEnv makes the test binary run one cgroup-tier run, its first,
// with the start of its guardian delayed, and print what the command saw.
const firstRunEnv = "CORRAL_PROC_TEST_FIRST_CGROUP_RUN"

// guardianSeen is a command that finds its supervisor's guardian among
// the machine's processes: the one whose arguments are the shim's name
// and the supervisor's cgroup directory (the parent of the command's
// leaf). The directory's name is put together at run time, so that no
// process but the guardian has it in its arguments.
const guardianSeen = `o=$(sed -n 's|^0::.*\(/corral/[^/]*\)/[^/]*$|\1|p' /proc/self/cgroup)
[ -n "$o" ] || { echo "no cgroup leaf: $(cat /proc/self/cgroup)"; exit 0; }
for f in /proc/[0-9]*/cmdline; do
	case "$(tr '\0' ' ' < "$f" 2>/dev/null)" in
	"corral-shim "*"$o ") echo "guardian up"; exit 0;;
	esac
done
echo "no guardian of $o"`

func init() {
	if os.Getenv(firstRunEnv) == "" {
		return
	}
	proc.DelayGuardian(300 * time.Millisecond)
	res, err := proc.Run(context.Background(), &proc.Spec{
		Args:        []string{"sh", "-c", guardianSeen},
		Containment: corral.ContainmentCgroup,
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Print(res.Stdout.Text())
	os.Exit(0)
}

// TestFirstCgroupRunStartsOnceItsGuardianIsUp: the first cgroup-tier run
// of a process starts the supervisor's guardian; its command must start
// only once the guardian is up, or a supervisor killed at that moment
// would leave the command's tree behind. The guardian's start is delayed
// here by 300 ms; the command looks for it as its first act.
func TestFirstCgroupRunStartsOnceItsGuardianIsUp(t *testing.T) {
	if _, err := cgroup.Detect(); err != nil {
		t.Skipf("SKIP: no cgroup tier here: %v", err)
	}
	if guardelf.Image() == nil {
		t.Skip("SKIP: no native guardian for this architecture (the Go one is found by its environment, not its arguments)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), firstRunEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "guardian up" {
		t.Fatalf("the first cgroup-tier run's command saw: %q (%v), want its guardian up", out, err)
	}
}
