package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

var probed struct {
	once sync.Once
	s    Support
	err  error
}

// Probe reports what this machine offers the sandbox, and an error wrapping
// ErrUnavailable that names everything missing when the sandbox cannot be
// built: corral then refuses the run (exit 125) rather than run it with
// less confinement. The first call costs one clone of a process into new
// namespaces (2.4 ms of CPU in corral's measure, the namespaces' making
// and teardown among it); later calls return the cached answer.
func Probe() (Support, error) {
	probed.once.Do(func() { probed.s, probed.err = probe() })
	return probed.s, probed.err
}

var checked struct {
	once sync.Once
	err  error
}

// Check is what corral asks before it starts a sandbox's init: every
// check of Probe that needs no process of its own (a seccomp filter for
// this architecture, the mount API, Landlock, seccomp notification and
// pidfd_getfd), cached; an error wraps ErrUnavailable and names what is
// missing. Whether this user may make the namespaces, Probe's clone,
// is left to the init's own clone, the same clone: a program that starts
// one sandboxed run (the CLI) does not pay for it twice. When that clone
// fails, Unavailable says why.
func Check() error {
	checked.once.Do(func() {
		var s Support
		if missing := probeInProcess(&s); len(missing) > 0 {
			checked.err = fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(missing, "; "))
		}
	})
	return checked.err
}

// Unavailable is what corral asks when the clone of a sandbox's init
// failed: Probe's error, which names what this machine lacks (and the
// setting that forbids it), or nil when Probe finds the sandbox available
// and the clone failed for a reason of its own.
func Unavailable() error {
	_, err := Probe()
	return err
}

func probe() (Support, error) {
	var s Support
	missing := probeInProcess(&s)
	if err := probeNamespaces(); err != nil {
		missing = append(missing, err.Error())
	} else {
		s.Namespaces = true
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(missing, "; "))
	}
	return s, nil
}

// probeInProcess fills s with what this process can check by itself, and
// returns what is missing.
func probeInProcess(s *Support) (missing []string) {
	if auditArch == 0 {
		missing = append(missing, "a seccomp filter for this architecture (corral has one for amd64 and arm64)")
	}
	if err := probeMountAPI(); err != nil {
		missing = append(missing, err.Error())
	} else {
		s.MountAPI = true
	}
	abi, err := landlockVersion()
	if err != nil {
		missing = append(missing, err.Error())
	}
	s.LandlockABI = abi
	if err := probeSeccomp(); err != nil {
		missing = append(missing, err.Error())
	} else {
		s.Seccomp = true
	}
	return missing
}

// probeNamespaces clones a child into every namespace the init gets and
// lets it exec a path that cannot exist: ENOENT from the exec proves that
// the clone and the identity mapping worked.
func probeNamespaces() error {
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}}
	_, err := syscall.ForkExec("/proc/self/corral-sandbox-probe", []string{"probe"}, attr)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	hint := ""
	if sysctl("user/max_user_namespaces") == "0" {
		hint = " (user.max_user_namespaces is 0)"
	} else if uid != 0 && sysctl("kernel/unprivileged_userns_clone") == "0" {
		hint = " (kernel.unprivileged_userns_clone is 0: unprivileged users may not create user namespaces)"
	} else if uid != 0 && sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1" {
		hint = " (kernel.apparmor_restrict_unprivileged_userns is 1: AppArmor needs a profile that lets corral use user namespaces)"
	} else if errors.Is(err, syscall.EPERM) {
		hint = " (a container's seccomp profile or an LSM may forbid them)"
	}
	return fmt.Errorf("user, mount, pid and network namespaces: clone: %v%s", err, hint)
}

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// probeMountAPI calls open_tree and mount_setattr with a bad descriptor:
// EBADF or EINVAL says the call exists, ENOSYS that it does not.
func probeMountAPI() error {
	if _, err := unix.OpenTree(-1, "", 0); errors.Is(err, unix.ENOSYS) {
		return errors.New("the new mount API (open_tree, move_mount: Linux 5.2)")
	}
	if err := unix.MountSetattr(-1, "", 0, &unix.MountAttr{}); errors.Is(err, unix.ENOSYS) {
		return errors.New("mount_setattr (Linux 5.12)")
	}
	return nil
}

func landlockVersion() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		return 0, errors.New("Landlock (Linux 5.13 with CONFIG_SECURITY_LANDLOCK)")
	case errno == unix.EOPNOTSUPP:
		return 0, errors.New("Landlock, which this kernel has but does not enable (add landlock to the lsm= boot parameter)")
	case errno != 0:
		return 0, fmt.Errorf("Landlock: %v", errno)
	}
	return int(v), nil
}

// probeSeccomp checks filters with user notification (and that the
// kernel's notification structures are the ones Gate uses), and
// pidfd_getfd, which Gate needs to connect on a command's behalf.
func probeSeccomp() error {
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		return fmt.Errorf("seccomp filters with user notification (Linux 5.0): %v", errno)
	}
	var sizes struct{ notif, resp, data uint16 }
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, 0, uintptr(unsafe.Pointer(&sizes))); errno != 0 {
		return fmt.Errorf("seccomp notification sizes: %v", errno)
	}
	if int(sizes.data) != int(unsafe.Sizeof(seccompData{})) || int(sizes.notif) != int(unsafe.Sizeof(seccompNotif{})) || int(sizes.resp) != int(unsafe.Sizeof(seccompNotifResp{})) {
		return fmt.Errorf("seccomp notifications of an unknown layout (sizes %d/%d/%d)", sizes.notif, sizes.resp, sizes.data)
	}
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return fmt.Errorf("pidfd_open (Linux 5.3): %v", err)
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, pidfd, 0)
	if err != nil {
		return fmt.Errorf("pidfd_getfd (Linux 5.6): %v", err)
	}
	unix.Close(fd)
	return nil
}
