package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaceID names the namespace that path (/proc/self/ns/NAME) is, by
// its device and inode.
func namespaceID(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", fmt.Errorf("namespace %s: %w", path, err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}

var guardProbed struct {
	once sync.Once
	err  error
}

// ProbeGuard reports whether this machine can build the task guard for
// this process's runs, with an error wrapping ErrUnavailable that names
// what is missing. Root needs mount, pid and IPC namespaces, and a user
// namespace as well for runs as another user; any other user needs a user
// namespace of its own. The first call clones a process or two (about a
// millisecond); later calls return the cached answer.
func ProbeGuard() error {
	guardProbed.once.Do(func() { guardProbed.err = probeGuard() })
	return guardProbed.err
}

func probeGuard() error {
	var missing []string
	if err := probeMountAPI(); err != nil {
		missing = append(missing, err.Error())
	}
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, "/", 0, unix.STATX_MNT_ID, &sx); err != nil || sx.Mask&unix.STATX_MNT_ID == 0 {
		missing = append(missing, "statx with mount ids (Linux 5.8)")
	}
	if os.Geteuid() == 0 {
		if err := probeClone(false); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if err := probeClone(true); err != nil {
		missing = append(missing, err.Error())
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the task guard needs %s", ErrUnavailable, strings.Join(missing, "; "))
	}
	return nil
}

// probeClone clones a child into the guard's namespaces (with a user
// namespace, mapped as a guard's init maps it, when user) and lets it exec
// a path that cannot exist: ENOENT proves that the clone worked.
func probeClone(user bool) error {
	sys := &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC, Pdeathsig: syscall.SIGKILL}
	what := "mount, pid and IPC namespaces"
	if user {
		sys.Cloneflags |= unix.CLONE_NEWUSER
		sys.UidMappings, sys.GidMappings = IdentityMaps()
		what = "a user namespace with " + what
	}
	_, err := syscall.ForkExec("/proc/self/corral-guard-probe", []string{"probe"}, &syscall.ProcAttr{Sys: sys})
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	hint := ""
	switch {
	case user && sysctl("user/max_user_namespaces") == "0":
		hint = " (user.max_user_namespaces is 0)"
	case user && os.Geteuid() != 0 && sysctl("kernel/unprivileged_userns_clone") == "0":
		hint = " (kernel.unprivileged_userns_clone is 0)"
	case user && os.Geteuid() != 0 && sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1":
		hint = " (kernel.apparmor_restrict_unprivileged_userns is 1: AppArmor needs a profile that lets corral use user namespaces)"
	case errors.Is(err, syscall.EPERM):
		hint = " (a container without CAP_SYS_ADMIN, its seccomp profile or an LSM may forbid them)"
	}
	return fmt.Errorf("%s: clone: %v%s", what, err, hint)
}

// IdentityMaps returns the id maps of an init's user namespace: every id
// to itself for root (files keep their owners), this process's own ids
// otherwise.
func IdentityMaps() (uids, gids []syscall.SysProcIDMap) {
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		all := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1 << 31}}
		return all, all
	}
	return []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}, []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
}

// prepareGuard builds a guard's view (see Guard) in the init: pid 1 of a
// new pid namespace, in mount and IPC namespaces that are not the host's.
func prepareGuard(p *Policy) ([]*os.File, []string, error) {
	if os.Getpid() != 1 {
		return nil, nil, errors.New("task guard: Prepare runs in the init, pid 1 of a new pid namespace (clone with CLONE_NEWPID)")
	}
	for _, ns := range guardNamespaces {
		id, err := namespaceID("/proc/self/ns/" + ns)
		if err != nil || id == p.Guard.Host[ns] {
			return nil, nil, fmt.Errorf("task guard: Prepare runs in a %s namespace of its own; refusing to change this one, the host's (%v)", ns, err)
		}
	}
	mechanisms := []string{"pid namespace", "mount namespace", "ipc namespace"}
	if initial, err := initialUserNamespace(); err == nil && !initial {
		mechanisms = append(mechanisms, "user namespace")
	}
	view, err := buildGuardView(p)
	if err != nil {
		return nil, nil, fmt.Errorf("task guard: file-system view: %w", err)
	}
	mechanisms = append(mechanisms, view...)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, nil, fmt.Errorf("task guard: make the init non-dumpable: %w", err)
	}
	return nil, mechanisms, nil
}

// confineGuard restricts the calling thread for a guarded command:
// no_new_privs, and capabilities cut to GuardCapabilities when the thread
// is root, to none otherwise, in every set (the bounding set first, so
// that no exec brings one back); then reads back what the kernel holds.
func confineGuard(p *Policy) (int, []string, int, error) {
	if unix.Gettid() == unix.Getpid() {
		return -1, nil, 0, errors.New("task guard: Confine called on the process's main thread: confine another thread")
	}
	var keep uint64
	mechanism := "no capabilities"
	if os.Geteuid() == 0 {
		keep, mechanism = guardCapabilityMask(), "reduced capabilities"
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, nil, 0, fmt.Errorf("task guard: no_new_privs: %w", err)
	}
	if err := limitCapabilities(keep); err != nil {
		return -1, nil, 0, fmt.Errorf("task guard: %w", err)
	}
	if err := checkGuarded(keep); err != nil {
		return -1, nil, 0, fmt.Errorf("task guard: %w", err)
	}
	return -1, []string{"no_new_privs", mechanism}, 0, nil
}

var capNumbers = map[string]uint{
	"CAP_CHOWN": unix.CAP_CHOWN, "CAP_DAC_OVERRIDE": unix.CAP_DAC_OVERRIDE, "CAP_FOWNER": unix.CAP_FOWNER,
	"CAP_FSETID": unix.CAP_FSETID, "CAP_KILL": unix.CAP_KILL, "CAP_SETGID": unix.CAP_SETGID,
	"CAP_SETUID": unix.CAP_SETUID, "CAP_SETPCAP": unix.CAP_SETPCAP, "CAP_SETFCAP": unix.CAP_SETFCAP,
	"CAP_NET_BIND_SERVICE": unix.CAP_NET_BIND_SERVICE, "CAP_SYS_CHROOT": unix.CAP_SYS_CHROOT,
	"CAP_AUDIT_WRITE": unix.CAP_AUDIT_WRITE,
}

// limitCapabilities leaves the calling thread keep, at most, in every
// capability set: the bounding set loses the rest (which needs
// CAP_SETPCAP, held until the capset at the end), the ambient set is
// emptied, and so is the inheritable set.
func limitCapabilities(keep uint64) error {
	last := 63
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if keep&(1<<c) != 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL {
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
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	for i := range data {
		k := uint32(keep >> (32 * i))
		data[i].Permitted &= k
		data[i].Effective &= k
		data[i].Inheritable = 0
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("limit capabilities: %w", err)
	}
	return nil
}

// checkGuarded reads back what the kernel holds for the calling thread:
// no_new_privs, the bounding set exactly keep, nothing ambient or
// inheritable, and no permitted or effective capability beyond keep.
func checkGuarded(keep uint64) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", unix.Gettid()))
	if err != nil {
		return fmt.Errorf("check the confinement: %w", err)
	}
	seen := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "NoNewPrivs", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			base := 16
			if k == "NoNewPrivs" {
				base = 10
			}
			n, err := strconv.ParseUint(strings.TrimSpace(v), base, 64)
			if err != nil {
				return fmt.Errorf("check the confinement: %s: %w", k, err)
			}
			seen[k] = n
		}
	}
	switch {
	case len(seen) != 6:
		return fmt.Errorf("check the confinement: the kernel reports only %v", seen)
	case seen["NoNewPrivs"] != 1:
		return errors.New("check the confinement: no_new_privs is not set")
	case seen["CapBnd"] != keep:
		return fmt.Errorf("check the confinement: the bounding set is %016x, want %016x", seen["CapBnd"], keep)
	case seen["CapAmb"] != 0 || seen["CapInh"] != 0:
		return fmt.Errorf("check the confinement: ambient %016x and inheritable %016x capabilities left", seen["CapAmb"], seen["CapInh"])
	case seen["CapPrm"]&^keep != 0 || seen["CapEff"]&^keep != 0:
		return fmt.Errorf("check the confinement: capabilities %016x beyond the guard's", (seen["CapPrm"]|seen["CapEff"])&^keep)
	}
	return nil
}
