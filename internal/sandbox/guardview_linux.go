package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	id     uint64
	dev    string // major:minor of the file system
	root   string // the directory of the file system mounted here
	point  string // where it is mounted
	fstype string
}

// readMounts lists the mounts of this process's mount namespace.
func readMounts() ([]mountEntry, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return parseMounts(string(b)), nil
}

func parseMounts(text string) []mountEntry {
	var out []mountEntry
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if len(f) < 7 || sep < 6 || sep+1 >= len(f) {
			continue
		}
		id, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, mountEntry{id: id, dev: f[2], root: procfs.UnescapeMountinfo(f[3]),
			point: procfs.UnescapeMountinfo(f[4]), fstype: f[sep+1]})
	}
	return out
}

// alias is a path where a hidden file or directory shows: in the mount
// that holds it, and in every other mount of the same file system whose
// directory contains it (whole: a mount of a directory within it, which
// shows part of it at its mount point).
type alias struct {
	path  string
	mount uint64
	whole bool
}

// shown is what a path resolves to: the mount it lands in and the inode.
type shown struct {
	mount    uint64
	dev, ino uint64
}

func statShown(path string) (shown, error) {
	var sx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_INO|unix.STATX_MNT_ID, &sx); err != nil {
		return shown{}, err
	}
	if sx.Mask&unix.STATX_MNT_ID == 0 {
		return shown{}, fmt.Errorf("%s: statx gives no mount id (Linux 5.8)", path)
	}
	return shown{mount: sx.Mnt_id, dev: unix.Mkdev(sx.Dev_major, sx.Dev_minor), ino: sx.Ino}, nil
}

// hiddenAt works out every path at which the hidden paths of g show, as
// the view is now: each alias whose path really lands in the mount it was
// computed for (and, for the hidden path itself, on its inode), with what
// it shows, to check after hiding that it shows it no more.
func hiddenAt(g *Guard, ms []mountEntry) (map[string]shown, error) {
	out := map[string]shown{}
	for _, h := range g.Hide {
		target, err := statShown(h)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("hidden path %s: %w", h, err)
		}
		for _, a := range aliasesOf(ms, target.mount, h) {
			s, err := statShown(a.path)
			if err != nil || s.mount != a.mount || (!a.whole && (s.dev != target.dev || s.ino != target.ino)) {
				continue // not visible there: covered by another mount, or gone
			}
			out[a.path] = s
		}
	}
	return out, nil
}

// buildGuardView turns the copy of the host's mount tree into a guarded
// run's view (see Guard), and returns the mechanisms it applied.
func buildGuardView(p *Policy) ([]string, error) {
	v := &view{p: p, devices: map[string]int{}}
	defer v.close()
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("make mounts private: %w", err)
	}
	ms, err := readMounts()
	if err != nil {
		return nil, err
	}
	hide, err := hiddenAt(p.Guard, ms)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		fd, err := cloneTree("/dev/"+name, false)
		if err != nil {
			if name == "tty" {
				continue
			}
			return nil, err
		}
		v.devices[name] = v.hold(fd)
	}
	// No device node anywhere is usable but the harmless ones bound into
	// the new /dev (their clones above keep their own flags).
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NODEV}); err != nil {
		return nil, fmt.Errorf("make device nodes unusable: %w", err)
	}
	if err := v.kernelMounts(ms); err != nil {
		return nil, err
	}
	if err := v.buildDev(); err != nil {
		return nil, fmt.Errorf("/dev: %w", err)
	}
	if err := guardProc(os.Geteuid() == 0); err != nil {
		return nil, err
	}
	paths := slices.SortedFunc(func(yield func(string) bool) {
		for path := range hide {
			if !yield(path) {
				return
			}
		}
	}, func(a, b string) int { return cmp.Or(cmp.Compare(depth(a), depth(b)), strings.Compare(a, b)) })
	for _, path := range paths {
		if err := v.deny(path); err != nil {
			return nil, err
		}
	}
	if err := os.Remove(v.empty); err != nil {
		return nil, err
	}
	for _, fd := range v.readOnly {
		if err := setAttr(fd, unix.MOUNT_ATTR_RDONLY, false); err != nil {
			return nil, fmt.Errorf("make a mount read-only: %w", err)
		}
	}
	for _, path := range paths {
		if s, err := statShown(path); err == nil && s.dev == hide[path].dev && s.ino == hide[path].ino {
			return nil, fmt.Errorf("hidden path %s still shows what it hid", path)
		}
	}
	mechanisms := []string{"own /proc", "private /dev", "no device nodes", "read-only kernel interfaces"}
	if len(paths) > 0 {
		mechanisms = append(mechanisms, "hidden paths")
	}
	return mechanisms, os.Chdir("/")
}

// kernelMounts makes the kernel's interface file systems read-only (with
// every mount below them) and
// hides tracefs, debugfs and every proc mount (the run gets a proc of its
// own), outside /proc and /dev, which the guard replaces.
func (v *view) kernelMounts(ms []mountEntry) error {
	for _, m := range ms {
		if within(m.point, "/proc") || within(m.point, "/dev") || (!isKernelType(m.fstype) && !isRevealingType(m.fstype)) {
			continue
		}
		if s, err := statShown(m.point); err != nil || s.mount != m.id {
			continue // covered by another mount: not reachable by its path
		}
		if isRevealingType(m.fstype) {
			if err := hideMount(m.point); err != nil {
				return err
			}
			continue
		}
		// With what is mounted below it: a tmpfs under /sys holds the
		// cgroup hierarchies on some machines.
		err := unix.MountSetattr(unix.AT_FDCWD, m.point, unix.AT_SYMLINK_NOFOLLOW|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
		if err != nil {
			return fmt.Errorf("make %s (%s) read-only: %w", m.point, m.fstype, err)
		}
	}
	return nil
}

// hideMount covers the mount at point with an empty read-only tmpfs.
func hideMount(point string) error {
	fd, err := newMount("tmpfs", unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, "mode=0755", "size=4k")
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return attach(fd, point)
}

// guardProc mounts a proc of the run's pid namespace over the host's. For
// a root run, what in it acts beyond the namespaces and checks only that
// its writer is root is bound read-only over itself: /proc/sys
// (core_pattern, modprobe: what the kernel runs as root outside every
// namespace), sysrq-trigger, the IRQ, bus, ACPI and file-system settings.
// The rest stays writable, so that a user namespace of the run's own can
// map its ids; and since these binds cover directories, the kernel lets
// no such namespace mount a proc of its own, which would be writable.
func guardProc(root bool) error {
	fd, err := newMount("proc", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := attach(fd, "/proc"); err != nil || !root {
		return err
	}
	for _, name := range procReadOnly {
		path := "/proc/" + name
		if _, err := os.Lstat(path); err != nil {
			continue // not on this kernel
		}
		bind, err := cloneTree(path, true)
		if err != nil {
			return err
		}
		err = setAttr(bind, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, true)
		if err == nil {
			err = attach(bind, path)
		}
		unix.Close(bind)
		if err != nil {
			return fmt.Errorf("%s read-only: %w", path, err)
		}
	}
	return nil
}
