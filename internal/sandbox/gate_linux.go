package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/procfs"
)

// gateMaxInFlight bounds the connect() calls the gate performs at once: a
// command that floods it waits, the init does not grow without end.
const gateMaxInFlight = 64

// gateSlice is how long the gate blocks in one connect() for a blocking
// socket before it checks that the command is still waiting and the gate
// still running.
const gateSlice = 250 * time.Millisecond

// errGone marks a notification that is no longer valid: the command's call
// was interrupted or the command died; nobody waits for an answer.
const errGone = unix.Errno(0x7fffffff)

// Gate answers the connect() calls of the commands confined by the filter
// whose notification descriptor is notifyFD (from Confine), until ctx is
// done or every process holding the filter has exited. It takes ownership
// of notifyFD and closes it before it returns. With notifyFD < 0 it returns
// nil at once.
//
// For each call it copies the address once from the command's memory,
// checks that the notification is still valid, takes the command's socket
// (pidfd_getfd) and performs the connect itself, on the command's behalf:
// the command's memory is never read again, so a thread that rewrites the
// address after the check changes nothing. A pathname Unix address is
// resolved as the command would (relative to its working directory,
// following symbolic links) and pinned with an O_PATH descriptor; the
// connection is allowed only when the pinned socket lies on a read-write
// mount of a writable root, /tmp, /var/tmp or /dev/shm and has one link,
// or is one of AllowUnixSockets (same device and inode), and is then made
// through the pinned descriptor (/proc/self/fd/N), so that the socket
// checked is the socket connected. Abstract addresses and other families
// are connected as given. The command gets the connect's own result
// (EINPROGRESS for a non-blocking socket, ECONNREFUSED, ...) or EACCES when
// refused.
//
// A call already taken from notifyFD (pending, by the native init, which
// answers itself only what needs no wait) is answered first, as any other.
//
// Calls are handled concurrently, at most 64 at once. A blocking connect is
// performed in slices of 250 ms (the socket's send timeout is lowered for
// the call and restored), so that Gate notices a command that died and its
// own end. Gate returns once every call in progress is answered.
func Gate(ctx context.Context, notifyFD int, p *Policy, pending *Pending) error {
	if notifyFD < 0 {
		return nil
	}
	g := &gate{p: p, listener: notifyFD}
	if err := unix.SetNonblock(notifyFD, true); err != nil {
		unix.Close(notifyFD)
		return fmt.Errorf("sandbox: gate: %w", err)
	}
	f := os.NewFile(uintptr(notifyFD), "seccomp-notify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return fmt.Errorf("sandbox: gate: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		f.SetReadDeadline(time.Unix(1, 0)) // wakes receive
	})
	var wg sync.WaitGroup
	defer func() {
		cancel() // handlers still connecting give up at their next slice
		wg.Wait()
		if !stop() {
			<-fired
		}
		f.Close()
	}()
	sem := make(chan struct{}, gateMaxInFlight)
	// serve answers n beside the others; the caller holds a slot in sem.
	serve := func(n *seccompNotif) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			g.handle(ctx, n)
		}()
	}
	if pending != nil {
		n := &seccompNotif{ID: pending.ID, Pid: pending.Pid}
		n.Data.Nr = pending.Nr
		copy(n.Data.Args[:], pending.Args[:])
		sem <- struct{}{}
		serve(n)
	}
	for {
		n, hup, err := g.receive(rc)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sandbox: gate: %w", err)
		}
		if hup {
			return nil
		}
		if n == nil {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			g.reply(n.ID, unix.EINTR)
			return nil
		}
		serve(n)
	}
}

// gate holds what the handlers of one Gate share.
type gate struct {
	p        *Policy
	listener int
	// The mount ids where sockets may be connected to, read from the
	// mount table at the first connect that needs them: most commands
	// connect no pathname socket, and the sandbox's mounts no longer
	// change once it is built (its commands hold no capability, and no
	// mount of the host's propagates into it).
	mounts struct {
		once sync.Once
		ids  map[uint64]bool
		err  error
	}
}

// allowedMount reports whether mount id is a read-write mount of the
// writable areas. A mount table that cannot be read allows none.
func (g *gate) allowedMount(id uint64) bool {
	g.mounts.once.Do(func() {
		g.mounts.ids, g.mounts.err = allowedMounts(append(g.p.WritableRoots(), "/tmp", "/var/tmp", "/dev/shm"))
	})
	return g.mounts.err == nil && g.mounts.ids[id]
}

// receive waits until a notification is pending and takes it. It returns
// hup when no process holds the filter any more, and the poller's error
// (a passed deadline) when Gate is ending.
func (g *gate) receive(rc syscall.RawConn) (n *seccompNotif, hup bool, err error) {
	var ioErr error
	rerr := rc.Read(func(fd uintptr) bool {
		for {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			k, err := unix.Poll(pfd, 0)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				ioErr = err
				return true
			}
			if k == 0 {
				return false // wait for the poller
			}
			if pfd[0].Revents&unix.POLLIN != 0 {
				var got seccompNotif
				_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&got)))
				switch errno {
				case 0:
					n = &got
					return true
				case unix.EINTR, unix.ENOENT: // interrupted, or the caller left meanwhile
					continue
				}
				ioErr = errno
				return true
			}
			if pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				hup = true
				return true
			}
			return false
		}
	})
	if rerr != nil {
		return nil, false, rerr
	}
	return n, hup, ioErr
}

// valid reports whether notification id still waits for an answer: its
// caller is alive and inside the call, so its pid still names it.
func (g *gate) valid(id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(g.listener), seccompIoctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
	if errno == unix.ENOTTY || errno == unix.EINVAL {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, uintptr(g.listener), seccompIoctlNotifIDValidOld, uintptr(unsafe.Pointer(&id)))
	}
	return errno == 0
}

// reply answers notification id with errno (0: success). An answer to a
// caller that left is refused by the kernel (ENOENT), harmlessly.
func (g *gate) reply(id uint64, errno unix.Errno) {
	resp := seccompNotifResp{ID: id, Error: -int32(errno)}
	unix.Syscall(unix.SYS_IOCTL, uintptr(g.listener), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
}

func (g *gate) handle(ctx context.Context, n *seccompNotif) {
	errno := unix.ENOSYS
	if n.Data.Nr == unix.SYS_CONNECT {
		errno = g.connect(ctx, n)
	}
	if errno != errGone {
		g.reply(n.ID, errno)
	}
}

// connect performs the connect() of notification n on the caller's behalf
// and returns its result.
func (g *gate) connect(ctx context.Context, n *seccompNotif) unix.Errno {
	tid := int(n.Pid)
	// The kernel's own bounds: an int, at most sizeof(struct
	// sockaddr_storage).
	addrLen := int32(uint32(n.Data.Args[2]))
	if addrLen < 0 || addrLen > 128 {
		return unix.EINVAL
	}
	addr := make([]byte, addrLen)
	readErr := readMemory(tid, n.Data.Args[1], addr)
	pidfd, pidErr := pidfdOpenThread(tid)
	if pidErr == nil {
		defer unix.Close(pidfd)
	}
	// From here the copy is what counts, and the pid named the caller.
	if !g.valid(n.ID) {
		return errGone
	}
	if readErr != nil {
		return unix.EFAULT
	}
	if pidErr != nil {
		return errnoOf(pidErr)
	}
	sock, err := unix.PidfdGetfd(pidfd, int(int32(n.Data.Args[0])), 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(sock)

	if len(addr) > 2 && *(*uint16)(unsafe.Pointer(&addr[0])) == unix.AF_UNIX && addr[2] != 0 {
		pin, errno := g.resolveUnix(tid, addr[2:])
		if errno != 0 {
			return errno
		}
		defer unix.Close(pin)
		addr = sockaddrUnix("/proc/self/fd/" + strconv.Itoa(pin))
	}
	return g.connectSocket(ctx, n.ID, sock, addr)
}

func errnoOf(err error) unix.Errno {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return unix.EIO
}

// readMemory copies len(buf) bytes at addr of thread tid's memory.
func readMemory(tid int, addr uint64, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	local := []unix.Iovec{{Base: &buf[0]}}
	local[0].SetLen(len(buf))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(buf)}}
	k, err := unix.ProcessVMReadv(tid, local, remote, 0)
	if err != nil {
		return err
	}
	if k != len(buf) {
		return unix.EFAULT
	}
	return nil
}

// pidfdOpenThread opens a pidfd for thread tid (PIDFD_THREAD, Linux 6.9),
// or, on older kernels, for its thread group.
func pidfdOpenThread(tid int) (int, error) {
	const pidfdThread = unix.O_EXCL
	fd, err := unix.PidfdOpen(tid, pidfdThread)
	if err != unix.EINVAL {
		return fd, err
	}
	tgid, err := threadGroup(tid)
	if err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

func threadGroup(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, unix.ESRCH
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, unix.ESRCH
}

// sockaddrUnix returns a struct sockaddr_un for path.
func sockaddrUnix(path string) []byte {
	b := make([]byte, 2+len(path)+1)
	*(*uint16)(unsafe.Pointer(&b[0])) = unix.AF_UNIX
	copy(b[2:], path)
	return b
}

// resolveUnix resolves the socket path sunPath (sun_path, up to its first
// NUL) as thread tid would and pins it. It returns the pinned descriptor,
// or the errno of the failed lookup, ECONNREFUSED when the path is no
// socket, EACCES when the socket is not allowed.
func (g *gate) resolveUnix(tid int, sunPath []byte) (int, unix.Errno) {
	if i := bytes.IndexByte(sunPath, 0); i >= 0 {
		sunPath = sunPath[:i]
	}
	path, dirfd, errno := targetPath(tid, string(sunPath))
	if errno != 0 {
		return -1, errno
	}
	if dirfd >= 0 {
		defer unix.Close(dirfd)
	}
	pin, err := unix.Openat(dirfd, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errnoOf(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(pin, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(pin)
		return -1, unix.ECONNREFUSED
	}
	if !g.allowedSocket(pin, &st) {
		unix.Close(pin)
		return -1, unix.EACCES
	}
	return pin, 0
}

// targetPath rewrites path so that the init resolves it as thread tid
// would: relative to the thread's working directory (dirfd, to close), and
// with the links to a process's own /proc entries (/proc/self,
// /proc/thread-self, /dev/fd) pointing at the thread's, not the init's.
func targetPath(tid int, path string) (string, int, unix.Errno) {
	if !filepath.IsAbs(path) {
		cwd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", -1, unix.ESRCH
		}
		return path, cwd, 0
	}
	for _, prefix := range []string{"/proc/self/", "/proc/thread-self/", "/dev/fd/"} {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			continue
		}
		tgid, err := threadGroup(tid)
		if err != nil {
			return "", -1, unix.ESRCH
		}
		switch prefix {
		case "/proc/thread-self/":
			path = fmt.Sprintf("/proc/%d/task/%d/%s", tgid, tid, rest)
		case "/dev/fd/":
			path = fmt.Sprintf("/proc/%d/fd/%s", tgid, rest)
		default:
			path = fmt.Sprintf("/proc/%d/%s", tgid, rest)
		}
		break
	}
	return path, unix.AT_FDCWD, 0
}

// allowedSocket reports whether the pinned socket may be connected to:
// one of AllowUnixSockets, or a socket with a single link (a hard link made
// earlier cannot bring a host socket in) on a read-write mount of the
// writable areas.
func (g *gate) allowedSocket(pin int, st *unix.Stat_t) bool {
	for _, s := range g.p.AllowUnixSockets {
		var a unix.Stat_t
		if unix.Stat(s, &a) == nil && a.Dev == st.Dev && a.Ino == st.Ino {
			return true
		}
	}
	if st.Nlink != 1 {
		return false
	}
	var sx unix.Statx_t
	if err := unix.Statx(pin, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &sx); err != nil || sx.Mask&unix.STATX_MNT_ID == 0 {
		return false
	}
	return g.allowedMount(sx.Mnt_id)
}

// allowedMounts returns the ids of the read-write mounts at or below one of
// roots, from /proc/self/mountinfo.
func allowedMounts(roots []string) (map[uint64]bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	ids := map[uint64]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		id, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		mp := procfs.UnescapeMountinfo(f[4])
		if !strings.HasPrefix(f[5], "rw") {
			continue
		}
		for _, r := range roots {
			if within(mp, r) {
				ids[id] = true
				break
			}
		}
	}
	return ids, nil
}

// connectSocket connects sock to addr and returns the result. A
// non-blocking socket gets the kernel's answer at once (EINPROGRESS, ...).
// A blocking one is connected in slices: its send timeout, which bounds a
// blocking connect, is lowered to gateSlice for the call (the caller is
// blocked in connect meanwhile and cannot observe it) and restored after;
// between slices the gate checks that the caller still waits and that it
// is not ending, and honours the socket's own timeout.
func (g *gate) connectSocket(ctx context.Context, id uint64, sock int, addr []byte) unix.Errno {
	flags, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return errnoOf(err)
	}
	if flags&unix.O_NONBLOCK != 0 {
		return rawConnect(sock, addr)
	}
	unixSock := len(addr) >= 2 && *(*uint16)(unsafe.Pointer(&addr[0])) == unix.AF_UNIX
	orig, err := unix.GetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO, orig)
	var deadline time.Time
	if d := time.Duration(orig.Nano()); d > 0 {
		deadline = time.Now().Add(d)
	}
	started := false
	for {
		slice := gateSlice
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				if unixSock {
					return unix.EAGAIN
				}
				return unix.EINPROGRESS
			}
			slice = min(slice, left)
		}
		tv := unix.NsecToTimeval(max(slice, time.Microsecond).Nanoseconds())
		if err := unix.SetsockoptTimeval(sock, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
			return errnoOf(err)
		}
		errno := rawConnect(sock, addr)
		switch {
		case errno == 0:
			return 0
		case errno == unix.EISCONN && started:
			return 0 // completed between two slices
		case errno == unix.EINTR:
		case errno == unix.EINPROGRESS || errno == unix.EALREADY:
			started = true
		case errno == unix.EAGAIN && unixSock: // the listener's backlog is full
		default:
			return errno
		}
		if ctx.Err() != nil {
			return unix.EINTR
		}
		if !g.valid(id) {
			return errGone
		}
	}
}

func rawConnect(sock int, addr []byte) unix.Errno {
	var p unsafe.Pointer
	if len(addr) > 0 {
		p = unsafe.Pointer(&addr[0])
	}
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(addr)))
	return errno
}
