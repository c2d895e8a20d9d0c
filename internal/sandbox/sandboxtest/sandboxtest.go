//go:build linux

package sandboxtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/sandbox"
)

// initEnv marks the process that is to be the init.
const initEnv = "CORRAL_SANDBOXTEST_INIT"

// Config is what Start runs.
type Config struct {
	// Policy is the sandbox.
	Policy *sandbox.Policy

	// Args is the command; a name without a slash is looked up in the PATH
	// of Env, inside the sandbox.
	Args []string

	// Env is the command's whole environment.
	Env []string

	// Dir is the command's working directory; empty means Policy.Workdir.
	Dir string
}

// Status is what the init reports once the command runs (or failed to).
type Status struct {
	Mechanisms  []string `json:"mechanisms"`
	LandlockABI int      `json:"landlock_abi"`

	// Error is set when the sandbox could not be built; nothing ran.
	Error string `json:"error,omitempty"`

	// CLOCK_MONOTONIC readings in the init: when it started, after Prepare,
	// after Confine, when the command's exec had succeeded.
	InitStart, Prepared, Confined, Execed int64
}

// Init is a started init and its command.
type Init struct {
	cmd       *exec.Cmd
	status    Status
	proxy     net.Listener
	listeners []net.Listener // what Prepare made: the proxy's and the loopback ports'

	// Started is the CLOCK_MONOTONIC reading taken just before the clone.
	Started int64
}

// Monotonic returns CLOCK_MONOTONIC in nanoseconds, comparable across the
// processes of one machine.
func Monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// Start starts an init running cfg and returns once the command runs
// (its exec succeeded) or the sandbox failed. The command's stdin is
// /dev/null; its output goes to stdout and stderr.
func Start(cfg Config, stdout, stderr io.Writer) (*Init, error) {
	if cfg.Dir == "" {
		cfg.Dir = cfg.Policy.Workdir
	}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	local, remote := os.NewFile(uintptr(fds[0]), "control"), os.NewFile(uintptr(fds[1]), "control")
	defer local.Close()
	exe, err := os.Executable()
	if err != nil {
		remote.Close()
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{initEnv + "=1"}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{remote}
	cmd.SysProcAttr = initAttr(cfg.Policy)
	i := &Init{cmd: cmd, Started: Monotonic()}
	err = cmd.Start()
	remote.Close()
	if err != nil {
		return nil, fmt.Errorf("start the init: %w", err)
	}
	if err := i.handshake(local, cfg, config); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		for _, l := range i.listeners {
			l.Close()
		}
		return nil, err
	}
	return i, nil
}

// initAttr clones the init as corral does: every namespace (the network one
// unless the policy keeps the host's network), its own ids mapped to
// themselves, and, for a user other than root (whose capabilities in the
// new namespace an exec would clear), the capabilities Prepare and Confine
// use kept as ambient ones.
func initAttr(p *sandbox.Policy) *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS)
	if p.Network != corral.NetworkHost {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{
		Cloneflags:  flags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	if uid != 0 {
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SYS_PTRACE, unix.CAP_SETPCAP}
	}
	return attr
}

func (i *Init) handshake(ctl *os.File, cfg Config, config []byte) error {
	if _, err := ctl.Write(config); err != nil {
		return fmt.Errorf("send the init its config: %w", err)
	}
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*(1+2*sandbox.MaxLoopbackPorts)))
	n, oobn, _, _, err := unix.Recvmsg(int(ctl.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n == 0 {
		return fmt.Errorf("the init died before it reported (see its stderr): %v", err)
	}
	if err := json.Unmarshal(buf[:n], &i.status); err != nil {
		return err
	}
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			return fmt.Errorf("listeners: %v", err)
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil {
			return fmt.Errorf("listeners: %v", err)
		}
		for _, fd := range fds {
			f := os.NewFile(uintptr(fd), "listener")
			l, err := net.FileListener(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("listener: %w", err)
			}
			i.listeners = append(i.listeners, l)
		}
		if cfg.Policy.ProxyPort > 0 && len(i.listeners) > 0 {
			i.proxy = i.listeners[0] // Prepare makes the proxy's first
		}
	}
	if i.status.Error != "" {
		return errors.New(i.status.Error)
	}
	return nil
}

// Status returns what the init reported.
func (i *Init) Status() Status { return i.status }

// Proxy returns the listener Prepare made for Policy.ProxyPort, nil without
// one. The caller serves it and closes it.
func (i *Init) Proxy() net.Listener { return i.proxy }

// Loopback returns the listeners Prepare made for Policy.Loopback, in
// order. The caller serves them and closes them.
func (i *Init) Loopback() []net.Listener {
	if i.proxy != nil {
		return i.listeners[1:]
	}
	return i.listeners
}

// Wait waits for the init, which exits with the command's status, and
// returns that exit code (128+N for a command killed by signal N).
func (i *Init) Wait() (int, error) {
	err := i.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// Run starts cfg and waits for it.
func Run(cfg Config, stdout, stderr io.Writer) (int, Status, error) {
	i, err := Start(cfg, stdout, stderr)
	if err != nil {
		return -1, Status{}, err
	}
	code, err := i.Wait()
	return code, i.status, err
}

// SetupTime is the time from the clone of the init to the command's
// successful exec: what Prepare and Confine cost on top of starting a
// process.
func (i *Init) SetupTime() time.Duration {
	return time.Duration(i.status.Execed - i.Started)
}
