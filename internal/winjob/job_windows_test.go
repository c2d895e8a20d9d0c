package winjob

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/goleak"
	"golang.org/x/sys/windows"

	"github.com/corralrun/corral/internal/testutil"
)

const helperEnv = "CORRAL_WINJOB_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "sleep" {
		time.Sleep(time.Hour) // ended by the test that started it
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// member starts this test binary as a sleeping process, tagged, and
// returns it with a handle that allows assigning and observing it. At
// cleanup the process is terminated if still alive and waited for.
func member(t *testing.T) (*exec.Cmd, windows.Handle) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=sleep", testutil.TagEnvVar(testutil.Tag(t)))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION,
		false, uint32(cmd.Process.Pid))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		windows.CloseHandle(h)
	})
	return cmd, h
}

func newJob(t *testing.T) *Job {
	t.Helper()
	j, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// limits reads back the job's limit flags and caps from the system.
func limits(t *testing.T, j *Job) windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION {
	t.Helper()
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	err := windows.QueryInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

var getHandleInformation = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetHandleInformation")

func TestNewJobKillsOnCloseAndDiesOnUnhandledException(t *testing.T) {
	j := newJob(t)
	if got := limits(t, j).BasicLimitInformation.LimitFlags; got != baseFlags {
		t.Fatalf("limit flags %#x, want %#x", got, baseFlags)
	}
	var flags uint32
	if r, _, err := getHandleInformation.Call(uintptr(j.h), uintptr(unsafe.Pointer(&flags))); r == 0 || flags&windows.HANDLE_FLAG_INHERIT != 0 {
		t.Fatalf("job handle flags %#x, %v: it must not be inheritable", flags, err)
	}
}

func TestSetLimitsSetsAndClearsCaps(t *testing.T) {
	j := newJob(t)
	if err := j.SetLimits(Limits{Processes: 3, Memory: 256 << 20}); err != nil {
		t.Fatal(err)
	}
	info := limits(t, j)
	want := uint32(baseFlags | windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_JOB_MEMORY)
	if info.BasicLimitInformation.LimitFlags != want || info.BasicLimitInformation.ActiveProcessLimit != 3 || info.JobMemoryLimit != 256<<20 {
		t.Fatalf("got flags %#x processes %d memory %d", info.BasicLimitInformation.LimitFlags,
			info.BasicLimitInformation.ActiveProcessLimit, info.JobMemoryLimit)
	}
	if err := j.SetLimits(Limits{}); err != nil {
		t.Fatal(err)
	}
	if got := limits(t, j).BasicLimitInformation.LimitFlags; got != baseFlags {
		t.Fatalf("limit flags %#x after clearing, want %#x", got, baseFlags)
	}
}

func TestAssignedProcessIsListedAndTerminatedWithTheCode(t *testing.T) {
	j := newJob(t)
	cmd, h := member(t)
	if err := j.Assign(h); err != nil {
		t.Fatal(err)
	}
	pids, err := j.Pids()
	if err != nil || !slices.Equal(pids, []uint32{uint32(cmd.Process.Pid)}) {
		t.Fatalf("pids %v, %v; want [%d]", pids, err, cmd.Process.Pid)
	}
	if err := j.Terminate(42); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 42 {
		t.Fatalf("exit code %d, want 42", code)
	}
	testutil.WaitFor(t, 10*time.Second, "an empty job", func() bool {
		pids, err := j.Pids()
		return err == nil && len(pids) == 0
	})
}

func TestPidsListsEveryMember(t *testing.T) {
	j := newJob(t)
	var want []uint32
	for range 3 {
		cmd, h := member(t)
		if err := j.Assign(h); err != nil {
			t.Fatal(err)
		}
		want = append(want, uint32(cmd.Process.Pid))
	}
	pids, err := j.Pids()
	slices.Sort(pids)
	slices.Sort(want)
	if err != nil || !slices.Equal(pids, want) {
		t.Fatalf("pids %v, %v; want %v", pids, err, want)
	}
}

func TestCloseTerminatesMembers(t *testing.T) {
	j := newJob(t)
	_, h := member(t)
	if err := j.Assign(h); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if ev, err := windows.WaitForSingleObject(h, 10000); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatal("a member outlived the closed job")
	}
}

func TestDetachLeavesMembersRunningAfterClose(t *testing.T) {
	j := newJob(t)
	_, h := member(t)
	if err := j.Assign(h); err != nil {
		t.Fatal(err)
	}
	if err := j.Detach(); err != nil {
		t.Fatal(err)
	}
	if got := limits(t, j).BasicLimitInformation.LimitFlags; got&windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE != 0 {
		t.Fatalf("kill-on-close still set: %#x", got)
	}
	j.Close()
	if ev, _ := windows.WaitForSingleObject(h, 500); ev != uint32(windows.WAIT_TIMEOUT) {
		t.Fatal("a detached member died with the job handle")
	}
	// member's cleanup terminates it.
}

func TestClosedJobRefusesEverything(t *testing.T) {
	j := newJob(t)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for name, err := range map[string]error{
		"SetLimits": j.SetLimits(Limits{Processes: 1}),
		"Assign":    j.Assign(windows.CurrentProcess()),
		"Terminate": j.Terminate(1),
		"Detach":    j.Detach(),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := j.Pids(); !errors.Is(err, ErrClosed) {
		t.Errorf("Pids after Close: %v", err)
	}
}

func TestConsoleHostIsOnlyAMemberConhost(t *testing.T) {
	j := newJob(t)
	cmd, h := member(t)
	if err := j.Assign(h); err != nil {
		t.Fatal(err)
	}
	if j.ConsoleHost(uint32(cmd.Process.Pid)) {
		t.Error("a member that is not conhost.exe taken for a console host")
	}
	if j.ConsoleHost(windows.GetCurrentProcessId()) {
		t.Error("a process outside the job taken for a console host")
	}
}
