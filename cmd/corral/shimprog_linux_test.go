package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/initelf"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
)

// A plain run's init is the native one (internal/initelf) where there is
// one; a run whose init is a Go program (a sandboxed run's once a command
// connects a Unix socket the Go init's gate connects; or from its
// start where there is no native init) starts it from corral-shim when
// that sits beside corral (as go install ./cmd/... and these tests put
// it), and from corral itself when corral is alone: a smaller program's
// start, the same init.
func TestRunStartsItsInitFromCorralShimBesideIt(t *testing.T) {
	out, errOut, code, _ := corralRun(t, testutil.Tag(t), "--containment", "subreaper", "--", "sh", "-c", `readlink /proc/$PPID/exe`)
	want := filepath.Join(filepath.Dir(corralBin), "corral-shim")
	if initelf.Image() != nil {
		want = "/memfd:corral-init (deleted)"
	}
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("a plain run's init: %q (exit %d, %s), want %s", out, code, errOut, want)
	}

	if _, err := exec.LookPath("python3"); err != nil && initelf.Image() != nil {
		t.Skip("SKIP: python3 is not installed: nothing here connects a Unix socket from a sandbox, which starts the Go init")
	}
	alone := filepath.Join(t.TempDir(), "corral")
	if err := os.Link(corralBin, alone); err != nil {
		t.Skipf("SKIP: a link to corral in another directory: %v", err)
	}
	ws := t.TempDir()
	// A socket the gate connects (in the workspace): the native init
	// answers itself only the connects the gate would refuse.
	l, err := net.Listen("unix", filepath.Join(ws, "gate.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct{ bin, want string }{
		{corralBin, filepath.Join(filepath.Dir(corralBin), "corral-shim")},
		{alone, alone},
	} {
		tag := testutil.Tag(t)
		// A connect to a Unix socket the gate connects: the native init
		// hands the run to the Go init, which serves the gate.
		cmd := exec.Command(c.bin, "run", "--sandbox", "workspace", "--workdir", ws, "--", "sh", "-c",
			`python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect_ex("gate.sock")'; exec sleep 600`)
		cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The sandbox's init is corral's child, named corral-shim: the
		// native init until the command connects, then the Go init in the
		// same process.
		var got string
		for deadline := time.Now().Add(20 * time.Second); (got == "" || strings.Contains(got, "memfd:")) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, st := range procfs.Descendants(cmd.Process.Pid) {
				if st.PPid == cmd.Process.Pid && st.Comm == "corral-shim" {
					got, _ = os.Readlink("/proc/" + strconv.Itoa(st.Pid) + "/exe")
				}
			}
		}
		cmd.Process.Signal(unix.SIGTERM)
		cmd.Wait()
		testutil.AssertNoTagged(t, tag, 5*time.Second)
		if got != c.want {
			t.Fatalf("%s: the sandboxed run's init is %q, want %s", c.bin, got, c.want)
		}
	}
}
