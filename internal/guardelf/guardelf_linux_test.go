package guardelf

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitFor polls cond until it holds, failing the test after timeout
// (internal/testutil's, which imports this package through the shim).
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// arches are the architectures with a native guardian: their source, the
// assembler and objcopy that make its bytes from it, and the bytes.
var arches = []struct {
	goarch, as, objcopy string
	machine             uint16
}{
	{"amd64", "as", "objcopy", 62},
	{"arm64", "aarch64-linux-gnu-as", "aarch64-linux-gnu-objcopy", 183},
}

// TestCodeIsItsSourceAssembled: the bytes in code_*.go are what the
// assembler makes of testdata/guardian_*.S, so that the source a reader
// checks is the program that runs. CI installs both assemblers (binutils
// and binutils-aarch64-linux-gnu).
func TestCodeIsItsSourceAssembled(t *testing.T) {
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			as, err1 := exec.LookPath(a.as)
			objcopy, err2 := exec.LookPath(a.objcopy)
			if err1 != nil || err2 != nil {
				t.Skipf("SKIP: %s or %s not installed (Debian's binutils, binutils-aarch64-linux-gnu)", a.as, a.objcopy)
			}
			dir := t.TempDir()
			obj, bin := filepath.Join(dir, "g.o"), filepath.Join(dir, "g.bin")
			if out, err := exec.Command(as, "-o", obj, filepath.Join("testdata", "guardian_"+a.goarch+".S")).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", a.as, err, out)
			}
			if out, err := exec.Command(objcopy, "-O", "binary", "-j", ".text", obj, bin).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", a.objcopy, err, out)
			}
			want, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if got := codeOf(t, a.goarch); !bytes.Equal(got, want) {
				t.Fatalf("code_%s.go holds %d bytes that are not the source's %d: regenerate it (testdata/gen.py)", a.goarch, len(got), len(want))
			}
		})
	}
}

// codeOf returns the code the package holds for goarch, read from its
// file: the test binary is built for one architecture only.
func codeOf(t *testing.T, goarch string) []byte {
	t.Helper()
	if goarch == runtime.GOARCH {
		return code
	}
	src, err := os.ReadFile("code_" + goarch + ".go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(src), "[]byte{")
	body, _, _ = strings.Cut(body, "\n}")
	var out []byte
	for _, line := range strings.Split(body, "\n") {
		line, _, _ = strings.Cut(line, "//")
		for _, f := range strings.Split(line, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			b, err := strconv.ParseUint(f, 0, 8)
			if err != nil {
				t.Fatalf("code_%s.go: %q: %v", goarch, f, err)
			}
			out = append(out, byte(b))
		}
	}
	return out
}

// guardian is a native guardian started by a test: ctl is the write end
// of its fd 0, kill the read end of the pipe at its fd 1 (standing in for
// cgroup.kill), dir the directory named in its argv[1].
type guardian struct {
	cmd  *exec.Cmd
	ctl  *os.File
	kill *os.File
	dir  string
}

// startGuardian executes img, through runner when it is not empty (an
// emulator for another architecture's image).
func startGuardian(t *testing.T, img []byte, runner ...string) *guardian {
	t.Helper()
	dir := t.TempDir()
	prog := filepath.Join(dir, "guardian")
	if err := os.WriteFile(prog, img, 0o700); err != nil {
		t.Fatal(err)
	}
	owner := filepath.Join(dir, "owner")
	if err := os.Mkdir(owner, 0o755); err != nil {
		t.Fatal(err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	killR, killW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, runner...), prog, owner)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout = ctlR, killW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlR.Close()
	killW.Close()
	g := &guardian{cmd: cmd, ctl: ctlW, kill: killR, dir: owner}
	t.Cleanup(func() {
		g.ctl.Close()
		g.cmd.Process.Kill()
		g.cmd.Wait()
		g.kill.Close()
	})
	return g
}

// ends closes the guardian's pipe, as its supervisor's death does, and
// checks that it wrote "1" to its fd 1, removed its directory and exited 0.
func (g *guardian) ends(t *testing.T) {
	t.Helper()
	g.ctl.Close()
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the guardian ended with %v, want exit 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the guardian did not end within 30 s of its pipe's end")
	}
	got, err := readAll(g.kill)
	if err != nil || got != "1" {
		t.Fatalf("the guardian wrote %q (%v) to its kill descriptor, want \"1\"", got, err)
	}
	if _, err := os.Stat(g.dir); !os.IsNotExist(err) {
		t.Fatalf("the guardian left its directory: %v", err)
	}
}

func readAll(f *os.File) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.String(), err
}

// pending returns the bytes waiting in the pipe f reads.
func pending(t *testing.T, f *os.File) int {
	t.Helper()
	n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGuardianKillsWhenItsPipeEnds: the guardian of this machine's
// architecture writes "1" to cgroup.kill, removes its directory and exits
// when its supervisor's pipe reads end of file, and not before: bytes on
// the pipe are read and ignored.
func TestGuardianKillsWhenItsPipeEnds(t *testing.T) {
	img := Image()
	if img == nil {
		t.Skipf("SKIP: no native guardian for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	g := startGuardian(t, img)
	if _, err := g.ctl.WriteString("not an end\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the guardian to read its pipe", func() bool {
		n, err := unix.IoctlGetInt(int(g.ctl.Fd()), unix.TIOCINQ)
		return err == nil && n == 0
	})
	if n := pending(t, g.kill); n != 0 {
		t.Fatalf("the guardian wrote %d bytes to its kill descriptor while its supervisor lives", n)
	}
	if _, err := os.Stat(g.dir); err != nil {
		t.Fatalf("the guardian removed its directory while its supervisor lives: %v", err)
	}
	g.ends(t)
}

// TestGuardianBlocksSignalsAndNamesItself: only the end of its pipe ends
// the guardian (or SIGKILL): a terminal's or a careless script's signals
// stay pending; and it is named corral-shim, as every helper of corral's
// is, so that a supervisor that inherits its zombie reaps it.
func TestGuardianBlocksSignalsAndNamesItself(t *testing.T) {
	img := Image()
	if img == nil {
		t.Skipf("SKIP: no native guardian for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	g := startGuardian(t, img)
	pid := g.cmd.Process.Pid
	status := func() string {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		return string(b)
	}
	waitFor(t, 10*time.Second, "the guardian to block its signals", func() bool {
		return field(status(), "SigBlk") != 0 && strings.Contains(status(), "Name:\tcorral-shim\n")
	})
	blocked := field(status(), "SigBlk")
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE, syscall.SIGUSR1} {
		if blocked&(1<<(sig-1)) == 0 {
			t.Errorf("%v is not blocked (SigBlk %x)", sig, blocked)
		}
		if err := g.cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the signals to be pending", func() bool {
		return field(status(), "ShdPnd")&(1<<(syscall.SIGTERM-1)) != 0
	})
	if st := status(); !strings.Contains(st, "State:\tS") {
		t.Fatalf("the guardian is not waiting on its pipe after the signals:\n%s", st)
	}
	g.ends(t)
}

// field reads a hexadecimal mask line of /proc/PID/status.
func field(status, name string) uint64 {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, name+":\t"); ok {
			n, _ := strconv.ParseUint(v, 16, 64)
			return n
		}
	}
	return 0
}

// TestOtherArchitecturesGuardianUnderEmulation runs the images of the
// architectures this machine is not, under qemu's user-mode emulator
// (Debian's qemu-user, which CI installs): the same contract.
func TestOtherArchitecturesGuardianUnderEmulation(t *testing.T) {
	for _, a := range arches {
		if a.goarch == runtime.GOARCH {
			continue
		}
		t.Run(a.goarch, func(t *testing.T) {
			emu := map[string]string{"amd64": "qemu-x86_64", "arm64": "qemu-aarch64"}[a.goarch]
			path, err := exec.LookPath(emu)
			if err != nil {
				t.Skipf("SKIP: %s not installed (Debian's qemu-user)", emu)
			}
			g := startGuardian(t, image(a.machine, codeOf(t, a.goarch)), path)
			g.ends(t)
		})
	}
}

// TestImageIsAnELFTheKernelLoads checks the header fields a loader reads.
func TestImageIsAnELFTheKernelLoads(t *testing.T) {
	img := image(62, []byte{0xf4})
	if !bytes.HasPrefix(img, []byte("\x7fELF\x02\x01\x01")) || len(img) != 64+2*56+1 {
		t.Fatalf("header % x", img[:16])
	}
	if entry := uint64(img[24]) | uint64(img[25])<<8 | uint64(img[26])<<16; entry != base+64+2*56 {
		t.Fatalf("entry %#x", entry)
	}
}
