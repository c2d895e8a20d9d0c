package winjob

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ErrClosed is returned by the methods of a Job after Close.
var ErrClosed = errors.New("winjob: job is closed")

// Limits caps the resources of all members of a job together. Zero means no
// cap.
type Limits struct {
	// Processes is the most live members at once
	// (JOB_OBJECT_LIMIT_ACTIVE_PROCESS). Threads do not count. Creating a
	// process beyond it fails in the creator.
	Processes uint32

	// Memory is the most bytes of committed memory of all members together
	// (JOB_OBJECT_LIMIT_JOB_MEMORY). A commit beyond it fails in the process
	// that asked; nothing is killed for it.
	Memory uintptr
}

// baseFlags are the limits every job has.
const baseFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION

// Job is a Windows Job Object created by New. Its methods are safe for
// concurrent use; after Close they return ErrClosed, so a handle value the
// system has reused is never touched.
type Job struct {
	mu   sync.Mutex
	h    windows.Handle // 0 once closed
	info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
}

// New creates an empty job with kill-on-close and die-on-unhandled-exception
// (a member that crashes exits at once with its exception code instead of
// waiting on an error-reporting dialog). The handle is not inheritable.
func New() (*Job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("winjob: creating a Job Object: %w", err)
	}
	j := &Job{h: h}
	j.info.BasicLimitInformation.LimitFlags = baseFlags
	if err := j.apply(); err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("winjob: setting kill-on-close: %w", err)
	}
	return j, nil
}

// SetLimits sets the caps of l, replacing earlier ones; zero fields remove
// a cap. Set them before assigning the first process, so that they hold
// from its first instruction. On error the job keeps its previous limits.
func (j *Job) SetLimits(l Limits) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	old := j.info
	b := &j.info.BasicLimitInformation
	b.LimitFlags &^= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_JOB_MEMORY
	b.ActiveProcessLimit = l.Processes
	j.info.JobMemoryLimit = l.Memory
	if l.Processes > 0 {
		b.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
	}
	if l.Memory > 0 {
		b.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
	}
	if err := j.apply(); err != nil {
		j.info = old
		return fmt.Errorf("winjob: setting limits: %w", err)
	}
	return nil
}

// apply writes j.info to the job; j.mu is held or j is not shared yet.
func (j *Job) apply() error {
	_, err := windows.SetInformationJobObject(j.h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&j.info)), uint32(unsafe.Sizeof(j.info)))
	return err
}

// Assign makes process a member. Assign a process created suspended, then
// resume it: it and all it creates are members from their first
// instruction.
func (j *Job) Assign(process windows.Handle) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	if err := windows.AssignProcessToJobObject(j.h, process); err != nil {
		return fmt.Errorf("winjob: assigning a process to the job: %w", err)
	}
	return nil
}

// Terminate terminates every member with exitCode. It returns once the
// termination is requested; members are gone when their last thread has
// left the kernel, which is at once unless a thread is stuck in a driver.
// Processes created while it runs are members and are terminated too.
func (j *Job) Terminate(exitCode uint32) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	if err := windows.TerminateJobObject(j.h, exitCode); err != nil {
		return fmt.Errorf("winjob: terminating the job: %w", err)
	}
	return nil
}

// Pids returns the process ids of the live members. A member that has
// exited is not listed, even while a handle to it is open.
func (j *Job) Pids() ([]uint32, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil, ErrClosed
	}
	// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORD counts, then ULONG_PTR
	// ids, which start 8 bytes in on both 32- and 64-bit systems.
	const word = unsafe.Sizeof(uintptr(0))
	hdr := int(8 / word)
	n := 32
	for try := 0; ; try++ {
		buf := make([]uintptr, hdr+n)
		err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&buf[0])), uint32(uintptr(len(buf))*word), nil)
		counts := (*[2]uint32)(unsafe.Pointer(&buf[0]))
		assigned, listed := int(counts[0]), min(int(counts[1]), n)
		runtime.KeepAlive(buf)
		if err == windows.ERROR_MORE_DATA && try < 8 {
			n = assigned + 16 // members may be added before the next query
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("winjob: listing the job's processes: %w", err)
		}
		ids := make([]uint32, listed)
		for i, id := range buf[hdr : hdr+listed] {
			ids[i] = uint32(id)
		}
		return ids, nil
	}
}

// ConsoleHost reports whether the process with pid is a member that is the
// system's console host (conhost.exe in the system directory). Windows
// starts one inside the job when a member creates a console, as a command
// does when the supervisor has none to share; it serves the console, not
// the command, and exits when the last process attached to that console
// does. The process is opened first, which keeps its pid from being
// reused, and then checked to be a member, so a reused pid is never taken
// for one.
func (j *Job) ConsoleHost(pid uint32) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	if pids, err := j.Pids(); err != nil || !slices.Contains(pids, pid) {
		return false
	}
	var buf [512]uint16 // ample for the system directory; a longer path is not it
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) != nil {
		return false
	}
	sys, err := windows.GetSystemDirectory()
	return err == nil && strings.EqualFold(windows.UTF16ToString(buf[:n]), filepath.Join(sys, "conhost.exe"))
}

// Detach clears kill-on-close, so that closing the job leaves its members
// running. Their limits stay; the job itself lives on until its last
// member is gone.
func (j *Job) Detach() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	old := j.info
	j.info.BasicLimitInformation.LimitFlags &^= windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if err := j.apply(); err != nil {
		j.info = old
		return fmt.Errorf("winjob: clearing kill-on-close: %w", err)
	}
	return nil
}

// Close closes the job handle: unless Detach was called, every member is
// terminated. Close after Close does nothing.
func (j *Job) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil
	}
	err := windows.CloseHandle(j.h)
	j.h = 0
	if err != nil {
		return fmt.Errorf("winjob: closing the job: %w", err)
	}
	return nil
}
