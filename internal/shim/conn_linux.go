package shim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/internal/sandbox"
)

// Config is what corral tells an init or holder of a run, as the last
// descriptor of a Run message, in a binary form of its own
// (codec_linux.go).
type Config struct {
	// Policy, when set, is the run's sandbox: an init or holder started
	// into new namespaces builds it (Prepare) and confines the thread it
	// forks from (Confine).
	Policy *sandbox.Policy

	// Confined says the init was forked by a holder from its confined
	// thread: the sandbox is built and holds it already.
	Confined bool

	// Ack says corral reads the command's pid from its pidfd (the init is
	// in another pid namespace than corral): the init must not reap the
	// command before corral says Ack.
	Ack bool

	// The command, for an init: Path is found already, Env is complete.
	Path string
	Args []string
	Env  []string
	Dir  string

	// ShareGroup starts the command in the init's own session and process
	// group (which are corral's) rather than a session of its own.
	ShareGroup bool

	// Ignore lists the signals corral ignores, which the command inherits
	// ignored, as a child of corral itself would.
	Ignore []int

	// OneShot says this run is the init's only one (a sandbox's init, or
	// one that holds a cgroup leaf): once the command has exited and
	// nothing of its tree is left, the init exits without waiting for
	// corral's Exit, so that its namespaces come down while corral ends
	// the run. The native init keeps it for a sandbox's run only; a plain
	// one waits.
	OneShot bool

	// Plan, with Policy, is the sandbox as the native init builds it
	// (sandbox.Native): a Go init ignores it.
	Plan *sandbox.NativePlan
}

// Operations of Msg. Corral sends Run, Ack, Idle, Exit, Detach and (to a
// holder) Spawn; an init sends Started, Exited, Idle and Failed, a holder
// Ready and Failed.
const (
	OpRun     = "run"     // a run; fds: stdin, stdout, stderr (none for a holder), then its config
	OpStarted = "started" // fds: the command's pidfd, on an init's first run its own pidfd (and the listeners of a new sandbox: proxy, loopback ports)
	OpExited  = "exited"  // the command's exit status
	OpFailed  = "failed"  // the command was not started; see Stage, Errno, Err
	OpReady   = "ready"   // a holder's sandbox is built; fds: its listeners (proxy, loopback ports), if asked for
	OpAck     = "ack"     // corral has read the command's pid: the init may reap it
	OpIdle    = "idle"    // the tree is gone: wait for another run; the init kills what is left and answers Idle (with Killed) once it waits
	OpExit    = "exit"    // the tree is gone: exit now
	OpDetach  = "detach"  // the tree is left running: reap it until it is gone, then exit; corral's end no longer matters
	OpSpawn   = "spawn"   // to a holder; fds: the new run's control socket
)

// Msg is one message on the control socket, in a binary form of its own
// (codec_linux.go).
type Msg struct {
	Op string

	// Started: the command's pid in the init's pid namespace and its start
	// time (clock ticks after boot).
	Pid   int
	Start uint64

	// Exited: the exit code, or the signal that ended the command, and
	// whether nothing else of the tree was left at that moment (then
	// nothing else can appear).
	Code   int
	Signal int
	Alone  bool

	// Idle, the init's answer: the processes it killed because they were
	// left (under the process-group tier, those that left the group).
	Killed int

	// Failed: the stage that failed ("config", "prepare", "confine",
	// "start"), the errno when there is one, and the message.
	Stage string
	Errno int
	Err   string

	// Started and Ready, for a sandbox: what holds it.
	Mechanisms  []string
	LandlockABI int
}

// Error returns the failure a Failed message reports, wrapping its errno
// so that callers can test it with errors.Is (os.ErrNotExist, ...).
func (m Msg) Error() error {
	if m.Errno != 0 {
		return fmt.Errorf("%s: %w", m.Err, unix.Errno(m.Errno))
	}
	return errors.New(m.Err)
}

// Conn is one end of a control socket (SOCK_SEQPACKET): one message per
// packet, descriptors attached. Its calls wait in the runtime's poller, not
// in a thread; it uses raw system calls rather than the net package, whose
// initialisation would come before the shim's own.
type Conn struct {
	f      *os.File
	rc     syscall.RawConn
	closed atomic.Bool
}

// maxMsg bounds a message; configurations travel as files, not messages.
const maxMsg = 16 << 10

// bufs holds receive buffers: a supervisor with a thousand runs has a
// thousand Recvs waiting.
var bufs = sync.Pool{New: func() any { b := make([]byte, maxMsg); return &b }}

// maxFDs is the most descriptors a message carries: two pidfds and a
// sandbox's listeners (its proxy's, two per loopback port).
const maxFDs = 3 + 2*sandbox.MaxLoopbackPorts

// NewConn takes over f, a SOCK_SEQPACKET socket (f is closed; the Conn
// has a descriptor of its own).
func NewConn(f *os.File) (*Conn, error) {
	defer f.Close()
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shim: control socket: %w", err)
	}
	return newConn(fd)
}

// newConn owns fd, a SOCK_SEQPACKET socket.
func newConn(fd int) (*Conn, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("shim: control socket: %w", err)
	}
	// A File made of a non-blocking descriptor enters the poller. It is
	// the descriptor's only File: another would close it when collected.
	f := os.NewFile(uintptr(fd), "shim-control")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shim: control socket: %w", err)
	}
	return &Conn{f: f, rc: rc}, nil
}

// Pair returns the two ends of a new control socket: corral's end as a
// Conn, the shim's as a file to pass at ControlFD (close-on-exec in this
// process, as every descriptor Go opens).
func Pair() (*Conn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("shim: control socket: %w", err)
	}
	c, err := newConn(fds[0])
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, err
	}
	return c, os.NewFile(uintptr(fds[1]), "shim-control"), nil
}

// Send sends m with the descriptors files (not closed).
func (c *Conn) Send(m Msg, files ...*os.File) error {
	var fds []int
	if len(files) > 0 {
		fds = make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
	}
	return c.SendFDs(m, fds...)
}

// SendFDs is Send with the descriptors as numbers, which the caller still
// owns: an init sends pidfds it opened without making Files of them (a
// File of a non-blocking descriptor joins the poller, and leaves it on
// Close: three system calls each, for nothing).
func (c *Conn) SendFDs(m Msg, fds ...int) error {
	b := m.marshal(make([]byte, 0, 64))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
		return serr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	return serr
}

// Recv waits for the next message and returns it with the descriptors it
// carried, which the caller owns. It returns io.EOF when the other end is
// closed, or this one.
func (c *Conn) Recv() (Msg, []*os.File, error) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	buf := *bp
	oob := make([]byte, unix.CmsgSpace(maxFDs*4))
	var n, oobn, flags int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err != nil {
		if c.closed.Load() {
			return Msg{}, nil, io.EOF
		}
		return Msg{}, nil, err
	}
	if rerr != nil {
		return Msg{}, nil, rerr
	}
	files, ferr := parseRights(oob[:oobn])
	if n == 0 && oobn == 0 {
		return Msg{}, nil, io.EOF
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeAll(files)
		return Msg{}, nil, fmt.Errorf("shim: a message longer than %d bytes or with more than %d descriptors", maxMsg, maxFDs)
	}
	var m Msg
	if err := m.unmarshal(buf[:n]); err != nil {
		closeAll(files)
		return Msg{}, nil, fmt.Errorf("shim: bad message %q: %w", buf[:min(n, 80)], err)
	}
	if ferr != nil {
		closeAll(files)
		return Msg{}, nil, ferr
	}
	return m, files, nil
}

// SetReadDeadline makes a Recv waiting past t fail with an error that
// wraps os.ErrDeadlineExceeded; the zero time waits for ever.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.f.SetReadDeadline(t) }

// Close closes the connection; a Recv blocked on it returns io.EOF.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.f.Close()
}

// Fd returns the connection's descriptor, for Keep.
func (c *Conn) Fd() int { return int(c.f.Fd()) }

func parseRights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("shim: control message: %w", err)
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			// Close-on-exec already: Recv asks for MSG_CMSG_CLOEXEC.
			files = append(files, os.NewFile(uintptr(fd), "shim-fd"))
		}
	}
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// ConfigFile writes cfg to an anonymous file to pass at ConfigFD.
func ConfigFile(cfg *Config) (*os.File, error) {
	b := cfg.marshal(nil)
	fd, err := unix.MemfdCreate("corral-shim-config", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("shim: config file: %w", err)
	}
	f := os.NewFile(uintptr(fd), "shim-config")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("shim: config file: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// PidfdPid returns the pid, in this process's pid namespace, of the
// process a pidfd refers to, from /proc/self/fdinfo; 0 once it has been
// reaped.
func PidfdPid(f *os.File) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", f.Fd()))
	if err != nil {
		return 0, err
	}
	for rest := b; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if v, ok := bytes.CutPrefix(line, []byte("Pid:\t")); ok {
			return strconv.Atoi(string(v)) // -1: a process of no pid namespace of ours
		}
	}
	return 0, errors.New("shim: no Pid in the pidfd's fdinfo")
}
