package procfs

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// RunWait returns how long the task id (a process or one of its threads)
// has waited on a run queue in its life (/proc/ID/schedstat, second
// field), or 0 where the kernel does not say.
func RunWait(id int) time.Duration {
	_, wait := SchedTimes(id)
	return wait
}

// SchedTimes returns how long the task id has run on a CPU and how long it
// has waited on a run queue, in its life (/proc/ID/schedstat, first and
// second fields), or zeros where the kernel does not say. What is left of
// the wall time, it slept or was blocked.
func SchedTimes(id int) (run, wait time.Duration) {
	var buf [128]byte
	b, err := readSmall("/proc/"+strconv.Itoa(id)+"/schedstat", buf[:])
	if err != nil {
		return 0, 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, 0
	}
	r, _ := strconv.ParseInt(string(f[0]), 10, 64)
	w, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return time.Duration(r), time.Duration(w)
}

// CPUStall returns the machine's CPU stall time so far: the wall time
// during which some runnable task waited for a CPU (/proc/pressure/cpu,
// "some" total), or 0 where the kernel does not keep it.
func CPUStall() time.Duration {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	_, total, ok := bytes.Cut(line, []byte("total="))
	if !ok || !bytes.HasPrefix(line, []byte("some")) {
		return 0
	}
	us, _ := strconv.ParseInt(string(bytes.TrimSpace(total)), 10, 64)
	return time.Duration(us) * time.Microsecond
}

// ThreadRunWait returns the calling thread's id and how long it has waited
// on a run queue in its life (/proc/TID/schedstat), or 0 where the
// kernel does not say. The caller must stay on its thread between two
// readings it compares (runtime.LockOSThread), or compare readings of the
// same thread id only.
func ThreadRunWait() (tid int, wait time.Duration) {
	tid = unix.Gettid()
	return tid, RunWait(tid)
}
