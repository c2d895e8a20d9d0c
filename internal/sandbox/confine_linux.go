package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Confine restricts the calling OS thread, and so every process it forks
// afterwards, for policy p: no_new_privs; no capability in any set
// (bounding, ambient, inheritable, permitted, effective), so that even
// root inside the user namespace holds none after exec; Landlock at the
// best ABI the kernel offers (reads and execution everywhere, writes only
// in the writable roots, /tmp, /var/tmp, /dev/pts, /dev/shm and the
// harmless devices); and a seccomp filter (see buildFilter). It changes
// nothing else in the process: its other threads keep their privileges.
//
// The caller must have locked the goroutine to its thread
// (runtime.LockOSThread), which must not be the process's main thread
// (Confine refuses it: lock the main goroutine to the main thread from an
// init function, so that no other goroutine lands there), must fork the
// command from that same thread
// (syscall.ForkExec: without SysProcAttr.UseCgroupFD, whose clone3 the
// filter refuses, and without new user namespaces), and must then let the
// thread end by returning from the goroutine still locked, so that the Go
// runtime never runs another goroutine on it. The thread may instead stay
// alive to fork further commands of one session: they then share one
// Landlock domain, and so may signal each other and reach each other's
// abstract sockets.
//
// When Landlock cannot control pathname Unix sockets (ABI below 9),
// connect() goes to the returned notification descriptor (close-on-exec),
// which the caller must hand to Gate for as long as the commands live:
// without Gate they cannot connect at all. Otherwise notifyFD is -1.
// mechanisms names what was applied, landlockABI the ABI used.
//
// On error the thread may be partly restricted: the caller must fork
// nothing from it and let it end.
//
// For a guard's policy (Policy.Guard) it applies the guard's part instead:
// no_new_privs and capabilities cut to GuardCapabilities for root, to
// none for any other user; no Landlock, no seccomp, no gate (notifyFD is
// -1).
func Confine(p *Policy) (notifyFD int, mechanisms []string, landlockABI int, err error) {
	if err := p.Validate(); err != nil {
		return -1, nil, 0, err
	}
	if p.Guard != nil {
		return confineGuard(p)
	}
	if unix.Gettid() == unix.Getpid() {
		// The main thread outlives its goroutine and stands for the whole
		// process when the kernel checks who may signal it: confined, it
		// would put the init inside the commands' Landlock domain.
		return -1, nil, 0, errors.New("sandbox: Confine called on the process's main thread: lock the main goroutine to it from an init function (runtime.LockOSThread) and confine another thread")
	}
	abi, err := landlockVersion()
	if err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w: %w", ErrUnavailable, err)
	}
	gate := abi < landlockUnixABI
	prog, err := buildFilter(gate)
	if err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	rs, err := landlockRuleset(p, abi)
	if err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	defer unix.Close(rs)

	// From here on the thread changes for good.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	if err := landlockEnforce(rs); err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	notifyFD, err = installFilter(prog, gate)
	if err != nil {
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	if err := checkConfined(); err != nil {
		if notifyFD >= 0 {
			unix.Close(notifyFD)
		}
		return -1, nil, 0, fmt.Errorf("sandbox: %w", err)
	}
	mechanisms = []string{"no_new_privs", "no capabilities", "landlock", "seccomp"}
	if gate {
		mechanisms = append(mechanisms, "unix socket gate")
	}
	return notifyFD, mechanisms, abi, nil
}

// dropCapabilities empties the calling thread's capability sets, the
// bounding set first (dropping from it needs CAP_SETPCAP, which the capset
// at the end takes away).
func dropCapabilities() error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL { // beyond what this kernel knows
				break
			}
			return fmt.Errorf("drop capability %d from the bounding set: %w (the init needs CAP_SETPCAP)", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// checkConfined reads back what the kernel holds for the calling thread,
// so that a confinement that silently did not apply is an error, not a
// weaker sandbox.
func checkConfined() error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", unix.Gettid()))
	if err != nil {
		return fmt.Errorf("check the confinement: %w", err)
	}
	want := map[string]string{
		"NoNewPrivs": "1", "Seccomp": "2",
		"CapInh": "0000000000000000", "CapPrm": "0000000000000000", "CapEff": "0000000000000000",
		"CapBnd": "0000000000000000", "CapAmb": "0000000000000000",
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if w, known := want[k]; ok && known {
			if v = strings.TrimSpace(v); v != w {
				return fmt.Errorf("check the confinement: %s is %s, want %s", k, v, w)
			}
			delete(want, k)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("check the confinement: the kernel reports no %v", slices.Sorted(maps.Keys(want)))
	}
	return nil
}
