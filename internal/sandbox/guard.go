package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Guard is the task guard: what keeps a run that is not sandboxed from the
// secrets of the program that started it (a service's environment,
// memory, token and database). Unlike a sandbox it keeps the run's file
// system, network and user as they are: the run writes what its user may
// write and reaches what the host reaches. What it takes away is every way
// around the service's own protections (docs/sandbox.md, "The task
// guard"):
//
//   - pid, mount and IPC namespaces of the run's own (and a user namespace
//     when the init is not root), with a /proc of its pid namespace: the
//     host's processes, the service among them, cannot be listed, opened
//     through /proc, traced or signalled;
//   - Hide, hidden wherever a mount of the view shows them (bind mounts of
//     the same file system included);
//   - a /dev of the harmless devices only, and no device node usable
//     anywhere else (nodev): no disk, no memory device;
//   - the kernel's interface file systems read-only (sysfs, cgroup,
//     securityfs, ...), tracefs, debugfs and every other proc mount
//     hidden, and for a root run /proc/sys, sysrq-trigger and the IRQ,
//     bus, ACPI and file-system settings of /proc read-only (a sysctl
//     checks only that its writer is root);
//   - no_new_privs, and a root run's capabilities cut to
//     GuardCapabilities (everything that reaches beyond file ownership,
//     the network's ports and its own processes is gone: CAP_SYS_ADMIN,
//     CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH, CAP_SYS_RAWIO, CAP_MKNOD,
//     CAP_NET_RAW, ...); any other user keeps none.
//
// A Policy carries a Guard instead of a sandbox's settings; Prepare and
// Confine then build the guard.
type Guard struct {
	// Hide lists files and directories the run may not see, absolute and
	// with symbolic links resolved: a directory appears empty, a file
	// empty, read-only both.
	Hide []string `json:"hide,omitempty"`

	// Host names the supervisor's own namespaces ("mnt", "pid", "ipc": the
	// device and inode of /proc/self/ns/NAME), which Prepare checks it is
	// not in: it changes the mounts of the namespace it runs in, and must
	// never change the host's.
	Host map[string]string `json:"host"`
}

// guardNamespaces are the namespaces a guard's init has of its own.
var guardNamespaces = []string{"mnt", "pid", "ipc"}

// GuardCapabilities are the capabilities a root run keeps under the guard:
// those of a container engine's default set that act on files, users,
// ports and the run's own processes, less CAP_MKNOD (device nodes) and
// CAP_NET_RAW (a raw socket reads the bearer tokens of the host's
// loopback traffic).
var GuardCapabilities = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_SETFCAP",
	"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_AUDIT_WRITE",
}

// NewGuardPolicy returns the policy of a guarded run whose working
// directory is workdir (empty: the current directory), hiding hide. The
// hidden paths are resolved through their symbolic links; one that does
// not exist is left out (there is nothing to hide).
func NewGuardPolicy(hide []string, workdir string) (*Policy, error) {
	if workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("task guard: working directory: %w", err)
		}
		workdir = wd
	}
	dir, err := resolveDir(workdir, "working directory")
	if err != nil {
		return nil, err
	}
	g := &Guard{Host: map[string]string{}}
	for _, h := range hide {
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("task guard: hidden path %q is not absolute", h)
		}
		r, err := filepath.EvalSymlinks(h)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("task guard: hidden path %s: %w", h, err)
		}
		if !slices.Contains(g.Hide, r) {
			g.Hide = append(g.Hide, r)
		}
	}
	for _, ns := range guardNamespaces {
		id, err := namespaceID("/proc/self/ns/" + ns)
		if err != nil {
			return nil, fmt.Errorf("task guard: %w", err)
		}
		g.Host[ns] = id
	}
	return &Policy{Workdir: dir, Guard: g}, nil
}

// validateGuard checks a guard's policy: nothing of a sandbox's settings,
// clean absolute paths, nothing hidden that would leave nothing to run,
// and the host's namespaces named.
func (p *Policy) validateGuard() error {
	if p.Mode != "" || p.TmpDir != "" || p.ProxyPort != 0 || len(p.Writable)+len(p.DenyRead)+len(p.Private)+len(p.AllowUnixSockets)+len(p.Loopback) > 0 {
		return errors.New("task guard: a guard's policy has no sandbox settings")
	}
	if !filepath.IsAbs(p.Workdir) {
		return fmt.Errorf("task guard: working directory %q is not absolute", p.Workdir)
	}
	for _, h := range p.Guard.Hide {
		if !filepath.IsAbs(h) || filepath.Clean(h) != h {
			return fmt.Errorf("task guard: hidden path %q is not absolute and clean", h)
		}
		for _, top := range []string{"/", "/proc", "/dev"} {
			if h == top {
				return fmt.Errorf("task guard: hiding %s would leave nothing to run", h)
			}
		}
	}
	for _, ns := range guardNamespaces {
		if p.Guard.Host[ns] == "" {
			return fmt.Errorf("task guard: the host's %s namespace is not named", ns)
		}
	}
	return nil
}

// kernelTypes are the file systems through which the kernel itself is
// configured: a guarded run sees them read-only.
var kernelTypes = []string{
	"sysfs", "cgroup", "cgroup2", "securityfs", "pstore", "efivarfs", "bpf",
	"configfs", "binfmt_misc", "fusectl", "selinuxfs", "nfsd", "rpc_pipefs",
	"mqueue", "devtmpfs", "devpts", "nsfs",
}

// revealingTypes are the file systems a guarded run does not see at all:
// tracefs and debugfs read (and probe) any process's memory, and a proc
// mount other than the run's own shows another pid namespace's processes.
var revealingTypes = []string{"tracefs", "debugfs", "proc"}

func isKernelType(t string) bool    { return slices.Contains(kernelTypes, t) }
func isRevealingType(t string) bool { return slices.Contains(revealingTypes, t) }

// joinRel returns base joined with what rel has beyond prefix; both are
// clean absolute paths and rel lies within prefix.
func joinRel(base, prefix, rel string) string {
	rest := strings.TrimPrefix(rel, prefix)
	if prefix == "/" {
		rest = rel
	}
	return filepath.Join(base, rest)
}
