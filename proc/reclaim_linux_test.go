package proc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// supervisorEnv makes the test binary act as a supervisor that starts a
// tree, prints its handle and waits to be killed.
const supervisorEnv = "CORRAL_PROC_TEST_SUPERVISOR"

func init() {
	tier := os.Getenv(supervisorEnv)
	if tier == "" {
		return
	}
	tag := os.Getenv(testutil.TagEnv)
	p, err := proc.Start(context.Background(), &proc.Spec{
		Args:        []string{"bash", "-c", "sleep 600 & setsid sleep 600 & (sleep 600 &); echo up; sleep 600"},
		Env:         []string{testutil.TagEnvVar(tag)},
		Containment: corral.Containment(tier),
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for {
		if o, _ := p.Output(); o.Text() == "up\n" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	json.NewEncoder(os.Stdout).Encode(p.Handle())
	select {}
}

func TestReclaimKillsTheTreeOfADeadSupervisor(t *testing.T) {
	for _, tier := range tiers(t) {
		if tier == corral.ContainmentProcessGroup {
			continue // a group tier run's setsid escapee is beyond reach by design
		}
		t.Run(string(tier), func(t *testing.T) {
			tag := testutil.Tag(t)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), supervisorEnv+"="+string(tier), testutil.TagEnvVar(tag))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || strings.HasPrefix(line, "error") {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("supervisor: %q %v", line, err)
			}
			var h proc.Handle
			if err := json.Unmarshal([]byte(line), &h); err != nil {
				t.Fatal(err)
			}
			// The supervisor dies without a chance to clean up.
			cmd.Process.Kill()
			cmd.Wait()
			if n := len(testutil.Tagged(tag)); n < 4 {
				t.Fatalf("%d tagged processes alive before reclaim, want 4 (supervisor killed them?)", n)
			}
			killed, err := proc.Reclaim(context.Background(), h)
			if err != nil {
				t.Fatalf("Reclaim: %v", err)
			}
			if killed < 4 {
				t.Errorf("Reclaim killed %d, want at least 4", killed)
			}
			testutil.AssertNoTagged(t, tag, 2*time.Second)
			testutil.AssertNoZombies(t, 2*time.Second)
			// Reclaiming again finds nothing and is not an error.
			if n, err := proc.Reclaim(context.Background(), h); err != nil || n != 0 {
				t.Fatalf("second Reclaim: %d %v", n, err)
			}
		})
	}
}
