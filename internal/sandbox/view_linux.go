package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
)

// layerKind says what a layer of the view puts at its path.
type layerKind int

const (
	layerTmp    layerKind = iota // Policy.TmpDir at /tmp
	layerVarTmp                  // a fresh tmpfs at /var/tmp
	layerDev                     // the sandbox's /dev
	layerProc                    // a fresh /proc
	layerRoot                    // a writable root, bound read-write
	layerKeep                    // something under /tmp or /var/tmp that stays reachable, read-only
	layerDeny                    // a DenyRead path, hidden
)

// layer is one mount of the view. Layers are attached parents first, so
// that each lands on top of what its path shows at that point: a writable
// root under /tmp goes into the private /tmp, a denied directory inside a
// writable root covers that part of it.
type layer struct {
	path string
	kind layerKind
	fd   int // the detached clone, for layerTmp, layerRoot and layerKeep
}

func depth(path string) int {
	if path == "/" {
		return 0
	}
	return strings.Count(path, "/")
}

// view builds the file-system view; the descriptors it holds are closed by
// close.
type view struct {
	p        *Policy
	layers   []layer
	devices  map[string]int // detached clones of the host's harmless devices
	fds      []int          // every descriptor to close at the end
	readOnly []int          // mounts made read-only once every layer is on
	empty    string         // an empty file to bind over denied files
}

func buildView(p *Policy) error {
	v := &view{p: p, devices: map[string]int{}}
	defer v.close()
	// Mounts propagated from the host's (they arrive as slaves) must not
	// change the view later; the view's mounts must not leave it.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w (the init needs CAP_SYS_ADMIN in its user namespace)", err)
	}
	if err := v.takeHandles(); err != nil {
		return err
	}
	// One call makes every mount read-only; the handles taken above are
	// copies outside the tree and keep their flags.
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("make the file system read-only: %w", err)
	}
	slices.SortStableFunc(v.layers, func(a, b layer) int {
		return cmp.Or(cmp.Compare(depth(a.path), depth(b.path)), cmpBool(a.kind == layerDeny, b.kind == layerDeny))
	})
	for _, l := range v.layers {
		if err := v.attach(l); err != nil {
			return err
		}
	}
	if v.empty != "" {
		if err := os.Remove(v.empty); err != nil {
			return err
		}
	}
	for _, fd := range v.readOnly {
		if err := setAttr(fd, unix.MOUNT_ATTR_RDONLY, false); err != nil {
			return fmt.Errorf("make a mount read-only: %w", err)
		}
	}
	return os.Chdir("/")
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func (v *view) close() {
	for _, fd := range v.fds {
		unix.Close(fd)
	}
}

func (v *view) hold(fd int) int {
	v.fds = append(v.fds, fd)
	return fd
}

// takeHandles lists the layers and clones, before anything is covered,
// what must appear in the view: the writable roots, TmpDir, the harmless
// devices, and the files under /tmp or /var/tmp that must stay reachable
// (the init's own executable, the allowed sockets).
func (v *view) takeHandles() error {
	p := v.p
	for _, r := range p.WritableRoots() {
		fd, err := cloneTree(r, true)
		if err != nil {
			return err
		}
		v.layers = append(v.layers, layer{path: r, kind: layerRoot, fd: v.hold(fd)})
	}
	fd, err := cloneTree(p.TmpDir, false)
	if err != nil {
		return fmt.Errorf("the private /tmp: %w", err)
	}
	v.layers = append(v.layers, layer{path: "/tmp", kind: layerTmp, fd: v.hold(fd)})
	if fi, err := os.Lstat("/var/tmp"); err == nil && fi.IsDir() {
		v.layers = append(v.layers, layer{path: "/var/tmp", kind: layerVarTmp, fd: -1})
	}
	v.layers = append(v.layers, layer{path: "/dev", kind: layerDev, fd: -1}, layer{path: "/proc", kind: layerProc, fd: -1})
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		fd, err := cloneTree("/dev/"+name, false)
		if err != nil {
			if name == "tty" {
				continue
			}
			return err
		}
		v.devices[name] = v.hold(fd)
	}
	keep := slices.Clone(p.AllowUnixSockets)
	if exe, err := os.Executable(); err == nil {
		keep = append(keep, exe)
	}
	if p.Mode == corral.SandboxReadOnly {
		keep = append(keep, p.Workdir) // the run starts there, even if it cannot write it
	}
	for _, path := range keep {
		if !within(path, "/tmp") && !within(path, "/var/tmp") {
			continue
		}
		fd, err := cloneTree(path, true)
		if err != nil {
			return err
		}
		v.layers = append(v.layers, layer{path: path, kind: layerKeep, fd: v.hold(fd)})
	}
	for _, d := range p.DenyRead {
		v.layers = append(v.layers, layer{path: d, kind: layerDeny, fd: -1})
	}
	return nil
}

func (v *view) attach(l layer) error {
	switch l.kind {
	case layerTmp:
		if err := setAttr(l.fd, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false); err != nil {
			return fmt.Errorf("the private /tmp: %w", err)
		}
		return attach(l.fd, "/tmp")
	case layerVarTmp:
		fd, err := newMount("tmpfs", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, "mode=1777")
		if err != nil {
			return err
		}
		return attach(v.hold(fd), "/var/tmp")
	case layerDev:
		return v.buildDev()
	case layerProc:
		return v.buildProc()
	case layerRoot:
		if err := mountpoint(l.path, true); err != nil {
			return err
		}
		if err := setAttr(l.fd, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, true); err != nil {
			return fmt.Errorf("writable root %s: %w", l.path, err)
		}
		return attach(l.fd, l.path)
	case layerKeep:
		var st, shown unix.Stat_t
		if err := unix.Fstat(l.fd, &st); err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
		if unix.Lstat(l.path, &shown) == nil && shown.Dev == st.Dev && shown.Ino == st.Ino {
			return nil // in view already, under a writable root
		}
		if err := mountpoint(l.path, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
			return err
		}
		if err := setAttr(l.fd, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, true); err != nil {
			return fmt.Errorf("%s: %w", l.path, err)
		}
		return attach(l.fd, l.path)
	case layerDeny:
		return v.deny(l.path)
	}
	return fmt.Errorf("unknown layer %d", l.kind)
}

// mountpoint makes sure path exists in the view as a directory (dir) or a
// file, creating it and its parents where it is missing. Only the private
// directories and the not yet read-only denial tmpfs can be missing one:
// everything else is the host's tree, where every path of the policy
// exists.
func mountpoint(path string, dir bool) error {
	fi, err := os.Lstat(path)
	if err == nil {
		if fi.IsDir() != dir {
			return fmt.Errorf("mount point %s: want a directory: %v, have mode %v", path, dir, fi.Mode())
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create mount point %s: %w", path, err)
	}
	if dir {
		err = os.Mkdir(path, 0o755)
	} else {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("create mount point %s: %w", path, err)
	}
	return nil
}

// deny hides path: an empty tmpfs over a directory, the empty file over
// anything else, both read-only. A path the view does not show is hidden
// already.
func (v *view) deny(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("denied path %s: %w", path, err)
	}
	var fd int
	if fi.IsDir() {
		// Read-only only at the end: writable roots below it need their
		// mount points created in it first.
		fd, err = newMount("tmpfs", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, "mode=0755", "size=64k")
		if err != nil {
			return err
		}
		v.readOnly = append(v.readOnly, v.hold(fd))
	} else {
		if fd, err = cloneTree(v.empty, false); err != nil {
			return err
		}
		v.hold(fd)
		if err := setAttr(fd, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, false); err != nil {
			return fmt.Errorf("denied path %s: %w", path, err)
		}
	}
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_SYMLINKS); err != nil {
		return &os.PathError{Op: "hide", Path: path, Err: err}
	}
	return nil
}

// buildDev mounts the sandbox's /dev: a small tmpfs with the harmless
// devices bound from the host (the bind keeps them usable although the
// tmpfs, mounted from a user namespace, could not hold device nodes of its
// own), a devpts instance of its own, a tmpfs /dev/shm and the usual links.
// No disk, no other device of the host is reachable.
func (v *view) buildDev() error {
	fd, err := newMount("tmpfs", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, "mode=0755", "size=64k")
	if err != nil {
		return err
	}
	v.readOnly = append(v.readOnly, v.hold(fd))
	if err := attach(fd, "/dev"); err != nil {
		return err
	}
	for name, dfd := range v.devices {
		path := "/dev/" + name
		if err := mountpoint(path, false); err != nil {
			return err
		}
		if err := attach(dfd, path); err != nil {
			return err
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return err
	}
	pts, err := newMount("devpts", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, "newinstance", "ptmxmode=0666", "mode=0620")
	if err != nil {
		return err
	}
	if err := attach(v.hold(pts), "/dev/pts"); err != nil {
		return err
	}
	if err := os.Mkdir("/dev/shm", 0o755); err != nil {
		return err
	}
	shm, err := newMount("tmpfs", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, "mode=1777")
	if err != nil {
		return err
	}
	if err := attach(v.hold(shm), "/dev/shm"); err != nil {
		return err
	}
	links := [][2]string{
		{"pts/ptmx", "/dev/ptmx"}, {"/proc/self/fd", "/dev/fd"},
		{"/proc/self/fd/0", "/dev/stdin"}, {"/proc/self/fd/1", "/dev/stdout"}, {"/proc/self/fd/2", "/dev/stderr"},
	}
	for _, l := range links {
		if err := os.Symlink(l[0], l[1]); err != nil {
			return err
		}
	}
	// The source of the empty files bound over denied files; removed once
	// they are bound.
	v.empty = "/dev/.corral-empty"
	return os.WriteFile(v.empty, nil, 0o444)
}

// buildProc mounts a proc of the new pid namespace over the host's: only
// the sandbox's processes are in it. It is read-only as a whole: among its
// files some act beyond the namespaces (sysrq-trigger, most of /proc/sys,
// which check only that the writer is root, as root inside is for a root
// corral), and no command may write any of it anyway (Landlock).
func (v *view) buildProc() error {
	fd, err := newMount("proc", unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return err
	}
	return attach(v.hold(fd), "/proc")
}
