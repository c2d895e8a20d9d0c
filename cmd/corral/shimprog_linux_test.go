package main

import (
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
// one; a run whose init is a Go program (a sandboxed run's) starts it from
// corral-shim when that sits beside corral (as go install ./cmd/... and
// these tests put it), and from corral itself when corral is alone: a
// smaller program's start, the same init.
func TestRunStartsItsInitFromCorralShimBesideIt(t *testing.T) {
	out, errOut, code, _ := corralRun(t, testutil.Tag(t), "--containment", "subreaper", "--", "sh", "-c", `readlink /proc/$PPID/exe`)
	want := filepath.Join(filepath.Dir(corralBin), "corral-shim")
	if initelf.Image() != nil {
		want = "/memfd:corral-init (deleted)"
	}
	if code != 0 || strings.TrimSpace(out) != want {
		t.Fatalf("a plain run's init: %q (exit %d, %s), want %s", out, code, errOut, want)
	}

	alone := filepath.Join(t.TempDir(), "corral")
	if err := os.Link(corralBin, alone); err != nil {
		t.Skipf("SKIP: a link to corral in another directory: %v", err)
	}
	ws := t.TempDir()
	for _, c := range []struct{ bin, want string }{
		{corralBin, filepath.Join(filepath.Dir(corralBin), "corral-shim")},
		{alone, alone},
	} {
		tag := testutil.Tag(t)
		cmd := exec.Command(c.bin, "run", "--sandbox", "workspace", "--workdir", ws, "--", "sleep", "600")
		cmd.Env = append(os.Environ(), testutil.TagEnvVar(tag))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The sandbox's init is corral's child, named corral-shim.
		var got string
		for deadline := time.Now().Add(20 * time.Second); got == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
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
