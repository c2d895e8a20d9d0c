package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/winjob"
)

// maxCommandLine is the longest command line CreateProcess takes, in UTF-16
// code units, terminating NUL included.
const maxCommandLine = 32767

// spawn starts the main process suspended, in a new console process group,
// assigns it to a new Job Object and only then lets it run, so that the
// process and everything it creates are held by the job from their first
// instruction. It inherits exactly its three standard handles.
//
// Every fallible allocation happens before CreateProcess; once the process
// exists, a failure terminates it before it has run, and nothing is left.
func spawn(a *spawnAttr) (child, error) {
	switch a.tier {
	case corral.ContainmentAuto, corral.ContainmentJobObject:
	default:
		return nil, fmt.Errorf("%w: %s is not available on Windows; ask for %s or leave Spec.Containment empty",
			ErrTierUnavailable, a.tier, corral.ContainmentJobObject)
	}
	if a.cred != nil {
		return nil, fmt.Errorf("Spec.Credential is not supported on Windows; run the supervisor as the user the command should run as: %w",
			errors.ErrUnsupported)
	}
	app, cmdline, env, dir, err := spawnStrings(a)
	if err != nil {
		return nil, err
	}

	job, err := winjob.New()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTierUnavailable, err)
	}
	_, err = windows.GetConsoleCP() // fails when the supervisor has no console
	console := err == nil
	c := &windowsChild{job: job, exit: make(chan struct{}), watched: make(chan struct{})}
	c.limits = applyJobLimits(job, a.limit, console)
	// The watcher waits on the process and on this event, which finish sets
	// when it must stop waiting for a process that has not exited.
	c.cancel, err = windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		job.Close()
		return nil, fmt.Errorf("creating an event: %w", err)
	}
	fail := func(err error) (child, error) {
		job.Close() // kill-on-close: a process already assigned goes with it
		windows.CloseHandle(c.cancel)
		return nil, err
	}

	std, inherit, err := inheritableStdio(a.files)
	defer func() {
		for _, h := range inherit {
			windows.CloseHandle(h)
		}
	}()
	if err != nil {
		return fail(err)
	}
	attrs, err := windows.NewProcThreadAttributeList(1)
	if err != nil {
		return fail(fmt.Errorf("creating a thread attribute list: %w", err))
	}
	defer attrs.Delete()
	if len(inherit) > 0 {
		// A zero handle would empty the whole list; inheritableStdio has
		// none.
		err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
			unsafe.Pointer(&inherit[0]), uintptr(len(inherit))*unsafe.Sizeof(inherit[0]))
		if err != nil {
			return fail(fmt.Errorf("restricting inherited handles: %w", err))
		}
	}
	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]

	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP |
		windows.CREATE_UNICODE_ENVIRONMENT | windows.EXTENDED_STARTUPINFO_PRESENT)
	if !console {
		// The supervisor has no console to share: give the command a
		// hidden one rather than a new window.
		flags |= windows.CREATE_NO_WINDOW
	}
	if err := a.waitHold(); err != nil {
		return fail(err)
	}
	var pi windows.ProcessInformation
	err = windows.CreateProcess(&app[0], &cmdline[0], nil, nil, len(inherit) > 0, flags,
		&env[0], dir, &si.StartupInfo, &pi)
	runtime.KeepAlive(inherit)
	runtime.KeepAlive(si)
	if err != nil {
		if errors.Is(err, windows.ERROR_BAD_EXE_FORMAT) {
			err = fmt.Errorf("%w: not a Windows program: %w", ErrNotExecutable, err)
		}
		return fail(err)
	}
	if err := job.Assign(pi.Process); err != nil {
		windows.TerminateProcess(pi.Process, 1) // it has not run an instruction
		windows.CloseHandle(pi.Thread)
		windows.CloseHandle(pi.Process)
		return fail(fmt.Errorf("%w: %w", ErrTierUnavailable, err))
	}
	_, err = windows.ResumeThread(pi.Thread)
	windows.CloseHandle(pi.Thread)
	if err != nil {
		windows.CloseHandle(pi.Process)
		return fail(fmt.Errorf("resuming the command's first thread: %w", err))
	}
	c.pid = int(pi.ProcessId)
	c.proc = pi.Process
	go c.watch()
	return c, nil
}

// spawnStrings converts what CreateProcess takes as strings, and checks
// them, before anything is created.
func spawnStrings(a *spawnAttr) (app, cmdline, env []uint16, dir *uint16, err error) {
	path := a.path
	if a.dir != "" {
		fi, err := os.Stat(a.dir)
		if err != nil {
			return nil, nil, nil, nil, err // Start names the directory
		}
		if !fi.IsDir() {
			return nil, nil, nil, nil, fmt.Errorf("working directory %s is not a directory", a.dir)
		}
		if dir, err = windows.UTF16PtrFromString(a.dir); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("working directory %q: %w", a.dir, err)
		}
		// As on Unix, where the program is run after changing directory, a
		// relative path is relative to Dir. CreateProcess would take it
		// relative to the supervisor's directory.
		if path != "" && filepath.VolumeName(path) == "" && !os.IsPathSeparator(path[0]) {
			path = filepath.Join(a.dir, path)
		}
	}
	if app, err = windows.UTF16FromString(path); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("program path %q: %w", path, err)
	}
	line := windows.ComposeCommandLine(a.args)
	if cmdline, err = windows.UTF16FromString(line); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("an argument contains a NUL character, which Windows cannot pass: %w", err)
	}
	if len(cmdline) > maxCommandLine {
		return nil, nil, nil, nil, fmt.Errorf("command line is %d UTF-16 units, over the Windows limit of %d: pass long input through Stdin or a file",
			len(cmdline)-1, maxCommandLine-1)
	}
	if env, err = envBlock(a.env); err != nil {
		return nil, nil, nil, nil, err
	}
	return app, cmdline, env, dir, nil
}

// envBlock builds a CREATE_UNICODE_ENVIRONMENT block: entries sorted by
// name without regard to case, as Windows documents, each NUL-terminated,
// and a final NUL. SYSTEMROOT is added from the supervisor when missing,
// as os/exec does, because Windows' own libraries (Winsock among them)
// fail without it; it is not a secret.
func envBlock(env []string) ([]uint16, error) {
	env = slices.Clone(env)
	if !slices.ContainsFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.EqualFold(k, "SYSTEMROOT")
	}) {
		if v, ok := os.LookupEnv("SYSTEMROOT"); ok {
			env = append(env, "SYSTEMROOT="+v)
		}
	}
	name := func(kv string) string {
		k, _, _ := strings.Cut(kv, "=")
		return strings.ToUpper(k)
	}
	slices.SortStableFunc(env, func(x, y string) int { return strings.Compare(name(x), name(y)) })
	var block []uint16
	for _, kv := range env {
		u, err := windows.UTF16FromString(kv) // NUL-terminated
		if err != nil {
			k, _, _ := strings.Cut(kv, "=")
			return nil, fmt.Errorf("environment variable %s contains a NUL character, which Windows cannot pass", k)
		}
		block = append(block, u...)
	}
	if len(env) == 0 {
		block = append(block, 0) // an empty block is two NULs
	}
	return append(block, 0), nil
}

// inheritableStdio duplicates the command's standard handles as inheritable
// handles of the supervisor, leaving the caller's files as they are. std
// holds them in stdin, stdout, stderr order (zero where a file has no
// handle); inherit lists the non-zero ones, for the handle list and for the
// caller to close once the process is created, also on error.
func inheritableStdio(files [3]*os.File) (std [3]windows.Handle, inherit []windows.Handle, err error) {
	self := windows.CurrentProcess()
	for i, f := range files {
		if f == nil {
			continue
		}
		h := windows.Handle(f.Fd())
		if h == 0 || h == windows.InvalidHandle {
			continue // a GUI supervisor's absent stdin, say
		}
		var dup windows.Handle
		if err := windows.DuplicateHandle(self, h, self, &dup, 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
			return std, inherit, fmt.Errorf("duplicating the command's %s: %w", [3]string{"stdin", "stdout", "stderr"}[i], err)
		}
		std[i] = dup
		inherit = append(inherit, dup)
	}
	return std, inherit, nil
}

// applyJobLimits sets Spec.Limits on the job and says what became of them.
// A job limit that the system refuses is reported, not fatal, as with the
// cgroup tier. Without a console to share, the command's console host is a
// member, and the note says it counts.
func applyJobLimits(job *winjob.Job, l Limits, console bool) string {
	if l == (Limits{}) {
		return ""
	}
	var lim winjob.Limits
	var applied []string
	if l.Pids > 0 {
		lim.Processes = uint32(min(uint64(l.Pids), uint64(^uint32(0))))
		what := "processes, not threads"
		if !console {
			what += "; the command's console host is one"
		}
		applied = append(applied, fmt.Sprintf("ActiveProcessLimit=%d (%s)", lim.Processes, what))
	}
	if l.Memory > 0 {
		lim.Memory = uintptr(min(uint64(l.Memory), uint64(^uintptr(0))))
		applied = append(applied, fmt.Sprintf("JobMemoryLimit=%d (committed bytes; commits beyond it fail)", lim.Memory))
	}
	if err := job.SetLimits(lim); err != nil {
		return "limits not applied: " + err.Error()
	}
	return strings.Join(applied, " ")
}
