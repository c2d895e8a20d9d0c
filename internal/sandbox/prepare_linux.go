package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
)

// Prepare builds the sandbox's namespaces for policy p. It runs in the
// init, pid 1 of a new pid namespace in a new user namespace with a new
// mount namespace (and a new network namespace under network none), before
// any command, once per sandbox. It:
//
//   - makes every mount private, then the whole tree read-only, nosuid and
//     nodev (one recursive mount_setattr);
//   - binds the writable roots back read-write (workspace mode), the
//     private TmpDir at /tmp, a fresh tmpfs at /var/tmp;
//   - mounts a fresh /dev (null, zero, full, random, urandom and tty bound
//     from the host, a devpts instance of its own with /dev/ptmx, a tmpfs
//     /dev/shm, the /dev/fd and standard stream links) and a fresh,
//     read-only /proc for the new pid namespace; /sys and the cgroup file
//     systems stay the host's, read-only;
//   - hides each DenyRead path: an empty read-only tmpfs over a directory,
//     an empty read-only file over anything else;
//   - puts back what lay under a replaced directory and must stay
//     reachable: writable roots, the init's own executable and the allowed
//     sockets under /tmp or /var/tmp (their handles are taken before
//     anything is covered; the mount points are created in the private
//     directories);
//   - under network none, brings up lo and checks that no other interface
//     is up (proof of a network namespace of its own);
//   - when ProxyPort is positive, listens on 127.0.0.1:ProxyPort in that
//     namespace, and on each address and port of Loopback (localhost's
//     ::1 only when the namespace has IPv6), and returns the listeners as
//     files (close-on-exec; the proxy's first, then Loopback's in order)
//     for corral, which accepts on them from the host's network: each
//     says its own address (getsockname);
//   - makes the init non-dumpable, so that no command can read its memory
//     or open its descriptors through /proc.
//
// mechanisms names the namespaces it verified. On error the namespaces are
// in an unknown state and the init must exit without running anything.
//
// For a guard's policy (Policy.Guard) it builds the guard's view instead,
// in the init of a guarded run (new mount, pid and IPC namespaces, and a
// user namespace unless the init is root): see Guard.
func Prepare(p *Policy) (listeners []*os.File, mechanisms []string, err error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	if p.Guard != nil {
		return prepareGuard(p)
	}
	if os.Getpid() != 1 {
		return nil, nil, errors.New("sandbox: Prepare runs in the init, pid 1 of a new pid namespace (clone with CLONE_NEWPID)")
	}
	if initial, err := initialUserNamespace(); err != nil || initial {
		return nil, nil, fmt.Errorf("sandbox: Prepare runs in a new user namespace (clone with CLONE_NEWUSER); refusing to change the mounts of this one (%v)", err)
	}
	if entries, err := os.ReadDir(p.TmpDir); err != nil || len(entries) > 0 {
		return nil, nil, fmt.Errorf("sandbox: the private /tmp must be a new, empty directory (Policy.TmpDir %s: %d entries, %v)", p.TmpDir, len(entries), err)
	}
	if err := buildView(p); err != nil {
		return nil, nil, fmt.Errorf("sandbox: file-system view: %w", err)
	}
	mechanisms = []string{"user namespace", "mount namespace", "pid namespace"}
	if p.Network == corral.NetworkNone {
		if err := upLoopback(); err != nil {
			return nil, nil, fmt.Errorf("sandbox: network: %w", err)
		}
		mechanisms = append(mechanisms, "network namespace")
	}
	if listeners, err = listenAll(p); err != nil {
		return nil, nil, err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		closeFiles(listeners)
		return nil, nil, fmt.Errorf("sandbox: make the init non-dumpable: %w", err)
	}
	return listeners, mechanisms, nil
}

// listenAll makes the proxy's listener and Loopback's, in that order.
func listenAll(p *Policy) ([]*os.File, error) {
	var files []*os.File
	if p.ProxyPort > 0 {
		f, err := listenTCP("127.0.0.1", p.ProxyPort)
		if err != nil {
			return nil, fmt.Errorf("sandbox: proxy listener: %w", err)
		}
		files = append(files, f)
	}
	for _, lp := range p.Loopback {
		ips, optional := lp.addrs()
		for i, ip := range ips {
			f, err := listenTCP(ip, lp.Port)
			if optional[i] && (errors.Is(err, unix.EADDRNOTAVAIL) || errors.Is(err, unix.EAFNOSUPPORT)) {
				continue // no IPv6 here: localhost is 127.0.0.1 alone
			}
			if err != nil {
				closeFiles(files)
				return nil, fmt.Errorf("sandbox: host loopback port %s: %w", netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(lp.Port)), err)
			}
			files = append(files, f)
		}
	}
	return files, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// initialUserNamespace reports whether this process is in the machine's
// initial user namespace, whose uid_map maps every id to itself.
func initialUserNamespace() (bool, error) {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false, err
	}
	return strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295", nil
}

// upLoopback brings lo up, after checking that no other interface is: a
// fresh network namespace has lo down and nothing else up, the host's has
// its real interfaces up.
func upLoopback() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// /proc/self/net lists the interfaces of this process's namespace.
	b, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n")[2:] {
		name, _, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name == "lo" {
			continue
		}
		ifr, err := unix.NewIfreq(name)
		if err != nil {
			return err
		}
		if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if ifr.Uint16()&unix.IFF_UP != 0 {
			return fmt.Errorf("interface %s is up: network none needs the init cloned with CLONE_NEWNET", name)
		}
	}
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w (the init needs CAP_NET_ADMIN in its user namespace)", err)
	}
	return nil
}

// listenTCP listens on ip:port (an IPv4 or IPv6 literal) with raw system
// calls: the init must not pull in the net package, whose initialisation
// would come before its own (see internal/shim).
func listenTCP(ip string, port int) (*os.File, error) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return nil, err
	}
	var family int
	var sa unix.Sockaddr
	if a = a.Unmap(); a.Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: a.As4()}
	} else {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: port, Addr: a.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "listener "+ip), nil
}

// fsContextError adds the kernel's own message, which fsconfig and fsmount
// leave to be read from the file-system context, to err.
func fsContextError(fsfd int, what string, err error) error {
	buf := make([]byte, 512)
	var msgs []string
	for {
		n, rerr := unix.Read(fsfd, buf)
		if rerr != nil || n <= 0 {
			break
		}
		msgs = append(msgs, string(bytes.TrimSpace(buf[:n])))
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s: %w (%s)", what, err, strings.Join(msgs, "; "))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// newMount creates a detached mount of a fresh file system of type fstype
// with options (key=value, or a bare key for a flag) and mount attributes.
func newMount(fstype string, attrs int, options ...string) (int, error) {
	fsfd, err := unix.Fsopen(fstype, unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen %s: %w", fstype, err)
	}
	defer unix.Close(fsfd)
	for _, o := range options {
		k, v, hasValue := strings.Cut(o, "=")
		if hasValue {
			err = unix.FsconfigSetString(fsfd, k, v)
		} else {
			err = unix.FsconfigSetFlag(fsfd, k)
		}
		if err != nil {
			return -1, fsContextError(fsfd, fmt.Sprintf("%s option %s", fstype, o), err)
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, fsContextError(fsfd, "create "+fstype, err)
	}
	mfd, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, attrs)
	if err != nil {
		return -1, fsContextError(fsfd, "mount "+fstype, err)
	}
	return mfd, nil
}

// attach moves the detached mount mfd onto path.
func attach(mfd int, path string) error {
	if err := unix.MoveMount(mfd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return &os.PathError{Op: "move_mount", Path: path, Err: err}
	}
	return nil
}

// setAttr sets mount attributes on the mount mfd (and those below it with
// recursive).
func setAttr(mfd int, attrs uint64, recursive bool) error {
	flags := uint(unix.AT_EMPTY_PATH)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	return unix.MountSetattr(mfd, "", flags, &unix.MountAttr{Attr_set: attrs})
}

// cloneTree returns a detached copy of the mount tree at path (with the
// mounts below it when recursive), taken before anything covers path.
func cloneTree(path string, recursive bool) (int, error) {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, flags)
	if err != nil {
		return -1, &os.PathError{Op: "open_tree", Path: path, Err: err}
	}
	return fd, nil
}
