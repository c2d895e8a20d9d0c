package proc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
)

// The tests start this test binary again as the command, in the mode named
// by helperEnv; arguments after "--" are the mode's.
const helperEnv = "CORRAL_WINDOWS_HELPER"

func TestWindowsHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("SKIP: not a test: the command that the Windows tests run")
	}
	var args []string
	for i, a := range os.Args {
		if a == "--" {
			args = os.Args[i+1:]
			break
		}
	}
	os.Exit(windowsHelper(mode, args))
}

func windowsHelper(mode string, args []string) int {
	switch mode {
	case "exit": // stdout, stderr, exit code
		fmt.Fprint(os.Stdout, args[0])
		fmt.Fprint(os.Stderr, args[1])
		code, _ := strconv.Atoi(args[2])
		return code
	case "args":
		json.NewEncoder(os.Stdout).Encode(args)
	case "env":
		for _, k := range args {
			v, ok := os.LookupEnv(k)
			if !ok {
				v = "<unset>"
			}
			fmt.Printf("%s=%s\n", k, v)
		}
	case "pwd":
		wd, _ := os.Getwd()
		fmt.Println(wd)
	case "ownjob":
		// The limits of the job this process is immediately in, as seen
		// from its first Go code.
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		err := windows.QueryInformationJobObject(0, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
		fmt.Printf("flags=%#x processes=%d err=%v\n", info.BasicLimitInformation.LimitFlags,
			info.BasicLimitInformation.ActiveProcessLimit, err)
	case "sleep":
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "brief": // file: exits half a second after it exists
		waitFile(args[0])
		time.Sleep(500 * time.Millisecond)
	case "grandchild": // grandchild mode, "null" or "inherit" stdout, then "exit" or "sleep", file
		// The grandchild is started the ordinary way, by os/exec. "exit"
		// waits for the file to exist, so that the test sees the
		// grandchild before the run handles it as a leftover.
		cmd := helperCommand(args[0], args[3])
		if args[1] == "inherit" {
			cmd.Stdout = os.Stdout
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("grandchild failed:", err)
			return 1
		}
		fmt.Printf("grandchild=%d\n", cmd.Process.Pid)
		if args[2] == "sleep" {
			time.Sleep(time.Hour)
		}
		waitFile(args[3])
	case "spawn":
		if err := helperCommand("sleep").Start(); err != nil { // stays: the run ends it
			fmt.Println("spawn=failed:", err)
		} else {
			fmt.Println("spawn=ok")
		}
	case "alloc": // MiB
		n, _ := strconv.Atoi(args[0])
		b := make([]byte, n<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("alloc=ok")
	case "trapbreak":
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		fmt.Println("ready")
		<-c
		fmt.Println("break")
		return 7
	case "ignorebreak":
		signal.Ignore(os.Interrupt)
		fmt.Println("ready")
		time.Sleep(time.Hour)
	case "supervise":
		// A supervisor that dies with its run still going.
		p, err := Start(context.Background(), helperSpec(os.Getenv(testutil.TagEnv), "sleep"))
		if err != nil {
			fmt.Println("start failed:", err)
			return 1
		}
		fmt.Printf("main=%d\n", p.Pid())
		time.Sleep(time.Hour)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	return 0
}

// helperCommand is this test binary in mode, for os/exec.
func helperCommand(mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestWindowsHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

// waitFile returns when path exists, or after a minute.
func waitFile(path string) {
	testutil.Eventually(time.Minute, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// goFile names a file that helpers wait for; release creates it.
func goFile(t *testing.T) string { return filepath.Join(t.TempDir(), "go") }

func release(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// helperSpec runs this test binary as the command, tagged with tag.
func helperSpec(tag, mode string, args ...string) *Spec {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return &Spec{
		Args: append([]string{exe, "-test.run=^TestWindowsHelperProcess$", "--"}, args...),
		Env:  []string{testutil.TagEnvVar(tag), helperEnv + "=" + mode},
	}
}

func runSpec(t *testing.T, spec *Spec) *Result {
	t.Helper()
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func startSpec(t *testing.T, spec *Spec) *Process {
	t.Helper()
	p, err := Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Stop(); p.Wait() })
	return p
}

// waitOutput waits until the command has printed want on stdout.
func waitOutput(t *testing.T, p *Process, want string) string {
	t.Helper()
	var out string
	testutil.WaitFor(t, 20*time.Second, "output "+want, func() bool {
		o, _ := p.Output()
		out = o.Text()
		return strings.Contains(out, want)
	})
	return out
}

// openGrandchild waits for the command to print "grandchild=PID" and opens
// that process, so that its end can be observed without ever confusing it
// with a reused pid. At cleanup the handle is closed, and the process
// terminated if still alive: the test started it.
func openGrandchild(t *testing.T, p *Process) windows.Handle {
	t.Helper()
	pid := 0
	waitOutput(t, p, "grandchild=")
	testutil.WaitFor(t, 20*time.Second, "a whole grandchild line", func() bool {
		o, _ := p.Output()
		_, rest, _ := strings.Cut(o.Text(), "grandchild=")
		line, ok := strings.CutSuffix(strings.SplitAfterN(rest, "\n", 2)[0], "\n")
		if ok {
			pid, _ = strconv.Atoi(strings.TrimSpace(line))
		}
		return ok
	})
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatalf("opening grandchild %d: %v", pid, err)
	}
	t.Cleanup(func() {
		if !gone(h, 0) {
			windows.TerminateProcess(h, 1)
			gone(h, 10*time.Second)
		}
		windows.CloseHandle(h)
	})
	return h
}

// waitRun waits up to d for the run to end. A run still going then has
// broken the bounded return: the test fails, and the grandchild of handle
// rescue is terminated, which lets the run end.
func waitRun(t *testing.T, p *Process, d time.Duration, rescue windows.Handle) *Result {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(d):
		t.Errorf("the run did not end within %v of its start: a leftover holding the output pipe keeps the drain waiting", d)
		windows.TerminateProcess(rescue, 1)
	}
	res, err := p.Wait()
	if err != nil {
		t.Errorf("Wait: %v", err)
	}
	return res
}

// gone reports whether the process of h has exited, waiting up to d.
func gone(h windows.Handle, d time.Duration) bool {
	ev, err := windows.WaitForSingleObject(h, uint32(d.Milliseconds()))
	return err == nil && ev == windows.WAIT_OBJECT_0
}

func needConsole(t *testing.T) {
	t.Helper()
	if _, err := windows.GetConsoleCP(); err != nil {
		t.Skip("SKIP: the test process has no console, so CTRL_BREAK_EVENT cannot be delivered")
	}
}

func TestJobObjectReportsExitCodeAndOutput(t *testing.T) {
	tag := testutil.Tag(t)
	res := runSpec(t, helperSpec(tag, "exit", "out", "err", "3"))
	if res.ExitCode != 3 || res.Signal != 0 || res.Success() || res.Status() != "exit 3" {
		t.Fatalf("got %+v", res)
	}
	if res.Stdout.Text() != "out" || res.Stderr.Text() != "err" {
		t.Fatalf("stdout %q stderr %q", res.Stdout.Text(), res.Stderr.Text())
	}
	if res.Containment != corral.ContainmentJobObject || res.ContainmentNote != "" {
		t.Fatalf("containment %q note %q", res.Containment, res.ContainmentNote)
	}
}

func TestJobObjectIsTheTierInTheHandle(t *testing.T) {
	tag := testutil.Tag(t)
	p := startSpec(t, helperSpec(tag, "sleep"))
	if h := p.Handle(); h.Pid != p.Pid() || h.Containment != corral.ContainmentJobObject {
		t.Fatalf("handle %+v, pid %d", h, p.Pid())
	}
}

func TestJobObjectHoldsTheCommandFromItsFirstInstruction(t *testing.T) {
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "ownjob")
	spec.Limits.Pids = 7 // marks the run's own job
	res := runSpec(t, spec)
	want := fmt.Sprintf("flags=%#x processes=7 err=<nil>", windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE|
		windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION|windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS)
	if got := strings.TrimSpace(res.Stdout.Text()); got != want {
		t.Fatalf("the command saw its job as %q, want %q", got, want)
	}
}

func TestJobObjectPassesArgumentsExactly(t *testing.T) {
	tag := testutil.Tag(t)
	want := []string{"plain", "with space", `quote"inside`, `back\slash`, `trailing\`, `\\"`, `"`, "", "tab\there", "ünïcode"}
	res := runSpec(t, helperSpec(tag, "args", want...))
	var got []string
	if err := json.Unmarshal([]byte(res.Stdout.Text()), &got); err != nil {
		t.Fatalf("output %q: %v", res.Stdout.Text(), err)
	}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestJobObjectPassesTheEnvironmentAsAsked(t *testing.T) {
	tag := testutil.Tag(t)
	t.Setenv("CORRAL_WIN_SECRET", "leak")
	spec := helperSpec(tag, "env", "CORRAL_WIN_SECRET", "FOO", "SYSTEMROOT")
	spec.EnvMode = corral.EnvClean
	spec.Env = append(spec.Env, "FOO=bar baz")
	out := runSpec(t, spec).Stdout.Text()
	if !strings.Contains(out, "CORRAL_WIN_SECRET=<unset>\n") || !strings.Contains(out, "FOO=bar baz\n") {
		t.Fatalf("environment %q", out)
	}
	if strings.Contains(out, "SYSTEMROOT=<unset>") {
		t.Fatalf("SYSTEMROOT missing from a clean environment: %q", out)
	}
}

func TestJobObjectRunsInTheGivenDirectory(t *testing.T) {
	tag := testutil.Tag(t)
	dir := t.TempDir()
	spec := helperSpec(tag, "pwd")
	spec.Dir = dir
	got := strings.TrimSpace(runSpec(t, spec).Stdout.Text())
	if !strings.EqualFold(filepath.Clean(got), filepath.Clean(dir)) {
		t.Fatalf("ran in %q, want %q", got, dir)
	}
}

func TestJobObjectStartFailsClearly(t *testing.T) {
	tag := testutil.Tag(t)
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		is   error
		say  string
	}{
		{"credential", func(s *Spec) { s.Credential = &Credential{UID: 1} }, errors.ErrUnsupported, "Credential is not supported on Windows"},
		{"other tier", func(s *Spec) { s.Containment = corral.ContainmentCgroup }, ErrTierUnavailable, "not available on Windows"},
		{"missing dir", func(s *Spec) { s.Dir = filepath.Join(t.TempDir(), "nope") }, os.ErrNotExist, "working directory"},
		{"NUL in argument", func(s *Spec) { s.Args = append(s.Args, "a\x00b") }, nil, "NUL"},
		{"NUL in environment", func(s *Spec) { s.Env = append(s.Env, "BAD=a\x00b") }, nil, "NUL"},
		{"long command line", func(s *Spec) { s.Args = append(s.Args, strings.Repeat("x", 40000)) }, nil, "over the Windows limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := helperSpec(tag, "exit", "", "", "0")
			tc.edit(spec)
			p, err := Start(context.Background(), spec)
			if err == nil {
				p.Stop()
				p.Wait()
				t.Fatal("Start succeeded")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.say) {
				t.Errorf("error %q does not say %q", err, tc.say)
			}
		})
	}
}

func TestJobObjectTimeoutKillsTheWholeTreeAndKeepsOutput(t *testing.T) {
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "grandchild", "sleep", "inherit", "sleep", goFile(t))
	spec.Timeout = 5 * time.Second
	spec.Grace = -1
	p := startSpec(t, spec)
	gc := openGrandchild(t, p)
	res, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != syscall.SIGKILL || res.ExitCode != -1 || res.Killed < 2 || res.Survivors != 0 {
		t.Fatalf("got %+v", res)
	}
	if bound := spec.Timeout + spec.drain() + 5*time.Second; res.Duration > bound {
		t.Fatalf("took %v, bound %v", res.Duration, bound)
	}
	if !strings.Contains(res.Stdout.Text(), "grandchild=") {
		t.Fatalf("output before the timeout lost: %q", res.Stdout.Text())
	}
	if !gone(gc, 0) {
		t.Fatal("grandchild alive after the run")
	}
}

func TestJobObjectKillsLeftoversAfterTheMainExits(t *testing.T) {
	tag := testutil.Tag(t)
	file := goFile(t)
	p := startSpec(t, helperSpec(tag, "grandchild", "sleep", "null", "exit", file))
	gc := openGrandchild(t, p)
	release(t, file)
	res := waitRun(t, p, 30*time.Second, gc)
	if res.ExitCode != 0 || res.Killed < 1 || res.Survivors != 0 || res.Detached != 0 {
		t.Fatalf("got %+v", res)
	}
	if !gone(gc, 0) {
		t.Fatal("leftover alive after the run")
	}
}

func TestJobObjectDrainIsBoundedWhileALeftoverHoldsTheOutput(t *testing.T) {
	tag := testutil.Tag(t)
	file := goFile(t)
	spec := helperSpec(tag, "grandchild", "sleep", "inherit", "exit", file)
	spec.Drain = 300 * time.Millisecond
	p := startSpec(t, spec)
	gc := openGrandchild(t, p)
	release(t, file)
	res := waitRun(t, p, 30*time.Second, gc)
	if res.ExitCode != 0 || res.Killed < 1 || !strings.Contains(res.Stdout.Text(), "grandchild=") {
		t.Fatalf("got %+v, stdout %q", res, res.Stdout.Text())
	}
	if !gone(gc, 0) {
		t.Fatal("leftover alive after the run")
	}
}

func TestJobObjectWaitsForLeftoversWhenAsked(t *testing.T) {
	tag := testutil.Tag(t)
	file := goFile(t)
	spec := helperSpec(tag, "grandchild", "brief", "null", "exit", file)
	spec.Leftovers = corral.LeftoversWait
	spec.Timeout = 30 * time.Second
	p := startSpec(t, spec)
	gc := openGrandchild(t, p)
	release(t, file)
	res := waitRun(t, p, 30*time.Second, gc)
	if res.TimedOut || res.Killed != 0 || res.ExitCode != 0 {
		t.Fatalf("got %+v", res)
	}
	if !gone(gc, 0) {
		t.Fatal("the run ended before its leftover")
	}
}

func TestJobObjectDetachesLeftoversWhenAsked(t *testing.T) {
	tag := testutil.Tag(t)
	file := goFile(t)
	spec := helperSpec(tag, "grandchild", "sleep", "null", "exit", file)
	spec.Leftovers = corral.LeftoversDetach
	p := startSpec(t, spec)
	gc := openGrandchild(t, p)
	release(t, file)
	res := waitRun(t, p, 30*time.Second, gc)
	if res.Detached != 1 || res.Killed != 0 {
		t.Fatalf("got %+v", res)
	}
	if gone(gc, 500*time.Millisecond) {
		t.Fatal("the detached leftover died with the job handle")
	}
	// The cleanup of openGrandchild terminates it.
}

func TestJobObjectTreeDiesWithItsSupervisor(t *testing.T) {
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "supervise")
	// Left to itself, the outer run would kill the orphaned inner run at
	// the end; waiting for it shows that the inner job's kill-on-close did.
	spec.Leftovers = corral.LeftoversWait
	spec.Timeout = 30 * time.Second
	p := startSpec(t, spec)
	waitOutput(t, p, "main=")
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait()
	if res.TimedOut || res.Signal != syscall.SIGKILL || res.Killed != 0 {
		t.Fatalf("the inner run outlived its supervisor: %+v", res)
	}
}

func TestJobObjectCommandInheritsOnlyItsStandardHandles(t *testing.T) {
	tag := testutil.Tag(t)
	// os.Pipe makes inheritable handles: if the command inherited the
	// write end, the read end would see no EOF while it runs.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := startSpec(t, helperSpec(tag, "sleep"))
	waitOutput(t, p, "ready")
	w.Close()
	eof := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r)
		eof <- err
	}()
	select {
	case err := <-eof:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		r.Close() // ends the reader
		<-eof
		t.Fatal("the command holds a handle it was not given")
	}
}

func TestJobObjectAppliesAndReportsLimits(t *testing.T) {
	tag := testutil.Tag(t)
	t.Run("processes", func(t *testing.T) {
		spec := helperSpec(tag, "spawn")
		spec.Limits.Pids = 1
		res := runSpec(t, spec)
		if !strings.Contains(res.LimitsNote, "ActiveProcessLimit=1") || !strings.Contains(res.Stdout.Text(), "spawn=failed") {
			t.Fatalf("note %q output %q", res.LimitsNote, res.Stdout.Text())
		}
	})
	t.Run("memory", func(t *testing.T) {
		spec := helperSpec(tag, "alloc", "512")
		spec.Limits.Memory = 64 << 20
		res := runSpec(t, spec)
		if !strings.Contains(res.LimitsNote, "JobMemoryLimit=67108864") || res.ExitCode == 0 || strings.Contains(res.Stdout.Text(), "alloc=ok") {
			t.Fatalf("note %q exit %d output %q", res.LimitsNote, res.ExitCode, res.Stdout.Text())
		}
	})
}

func TestJobObjectSignalKillTerminatesTheMainAndSaysSo(t *testing.T) {
	tag := testutil.Tag(t)
	p := startSpec(t, helperSpec(tag, "sleep"))
	waitOutput(t, p, "ready")
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait()
	if res.ExitCode != -1 || res.Signal != syscall.SIGKILL || res.Status() != "signal SIGKILL" {
		t.Fatalf("got %+v", res)
	}
	if err := p.Signal(syscall.SIGKILL); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal after the end: %v", err)
	}
}

func TestJobObjectSignalInterruptArrivesAsCtrlBreak(t *testing.T) {
	needConsole(t)
	tag := testutil.Tag(t)
	p := startSpec(t, helperSpec(tag, "trapbreak"))
	waitOutput(t, p, "ready")
	if err := p.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	res, _ := p.Wait()
	if res.ExitCode != 7 || !strings.Contains(res.Stdout.Text(), "break") {
		t.Fatalf("got %+v, stdout %q", res, res.Stdout.Text())
	}
}

func TestJobObjectTimeoutSendsCtrlBreakBeforeTerminating(t *testing.T) {
	needConsole(t)
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "trapbreak")
	spec.Timeout = time.Second
	spec.Grace = time.Minute
	res := runSpec(t, spec)
	if !res.TimedOut || res.ExitCode != 7 || res.Duration > 30*time.Second {
		t.Fatalf("got %+v", res)
	}
}

func TestJobObjectReportsTheSignalOfAnUnhandledCtrlBreak(t *testing.T) {
	needConsole(t)
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "sleep")
	spec.Timeout = time.Second
	spec.Grace = time.Minute
	res := runSpec(t, spec)
	if !res.TimedOut || res.Signal != syscall.SIGTERM || res.ExitCode != -1 || res.Duration > 30*time.Second {
		t.Fatalf("got %+v", res)
	}
}

func TestJobObjectTerminatesWhatIgnoresCtrlBreakAfterTheGrace(t *testing.T) {
	needConsole(t)
	tag := testutil.Tag(t)
	spec := helperSpec(tag, "ignorebreak")
	spec.Timeout = time.Second
	spec.Grace = time.Second
	res := runSpec(t, spec)
	if !res.TimedOut || res.Signal != syscall.SIGKILL || res.Killed < 1 || res.Duration < spec.Timeout+spec.Grace {
		t.Fatalf("got %+v", res)
	}
}

var getProcessHandleCount = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetProcessHandleCount")

func handleCount(t *testing.T) int {
	var n uint32
	if r, _, err := getProcessHandleCount.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&n))); r == 0 {
		t.Fatalf("GetProcessHandleCount: %v", err)
	}
	return int(n)
}

func TestJobObjectRunsLeaveNoHandleBehind(t *testing.T) {
	tag := testutil.Tag(t)
	file := goFile(t)
	release(t, file) // the command exits at once, leaving its grandchild
	spec := helperSpec(tag, "grandchild", "sleep", "null", "exit", file)
	runSpec(t, spec) // warms up the runtime's own handles
	before := handleCount(t)
	const runs = 5
	for range runs {
		runSpec(t, spec)
	}
	// A leak of the job, process or event handle would show 3 per run.
	if after := handleCount(t); after-before >= runs {
		t.Fatalf("%d handles before %d runs, %d after", before, runs, after)
	}
}

func TestOutputPipeReadHonoursADeadlineWhileAWriterLives(t *testing.T) {
	r, w, err := outputPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // held open, as a leftover process would
	if _, err := w.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, err := r.Read(b)
	if err != nil || string(b[:n]) != "kept" {
		t.Fatalf("read %q, %v", b[:n], err)
	}
	if err := r.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatalf("SetReadDeadline: %v", err)
	}
	start := time.Now()
	if _, err := r.Read(b); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the deadline held the read for %v", d)
	}
}

func TestOutputPipeEndsAtEOFWhenTheWriterCloses(t *testing.T) {
	r, w, err := outputPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Write([]byte("all"))
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "all" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func TestSignalNamesRoundTripOnWindows(t *testing.T) {
	for sig, name := range signalNames {
		if SignalName(sig) != name {
			t.Errorf("SignalName(%d) = %q", sig, SignalName(sig))
		}
		for _, s := range []string{name, strings.TrimPrefix(name, "SIG"), strconv.Itoa(int(sig))} {
			if got, err := ParseSignal(s); err != nil || got != sig {
				t.Errorf("ParseSignal(%q) = %v, %v", s, got, err)
			}
		}
	}
	if _, err := ParseSignal("NOPE"); err == nil {
		t.Error("ParseSignal accepted NOPE")
	}
}

func BenchmarkStartJobObject(b *testing.B) {
	spec := helperSpec("bench", "exit", "", "", "0")
	b.Run("corral job object", func(b *testing.B) {
		for b.Loop() {
			if _, err := Run(context.Background(), spec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os/exec peer", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(spec.Args[0], spec.Args[1:]...)
			cmd.Env = append(os.Environ(), spec.Env...)
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
