package proc

import (
	"io"
	"os"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/setting"
)

// Defaults applied to the zero values of a Spec.
const (
	DefaultGrace     = 2 * time.Second
	DefaultDrain     = 250 * time.Millisecond
	DefaultMaxOutput = 1 << 20
)

// Spec describes one command to run under supervision. The zero value of
// each field means something sensible, documented with the field; only Args
// is required.
type Spec struct {
	// Path is the program to run. If empty, Args[0] is used: a name without
	// a slash is looked up in the supervisor's PATH.
	Path string

	// Args holds the command name and its arguments. Args[0] is what the
	// program sees as its name.
	Args []string

	// Dir is the working directory; empty means the supervisor's.
	Dir string

	// EnvMode selects the base environment: the supervisor's whole
	// environment (the default), only the variables named in EnvAllow, or
	// none. Env is added on top.
	EnvMode corral.EnvMode

	// EnvAllow names the variables kept in EnvAllowlist mode. A name ending
	// in "*" keeps every variable with that prefix.
	EnvAllow []string

	// Env holds "KEY=VALUE" entries added to the base environment; they win
	// over inherited variables of the same name.
	Env []string

	// Stdin is the command's standard input. Nil means the null device, so
	// a command never reads the supervisor's input by accident. An *os.File
	// is passed as is (the command, or the init that starts it, holds its
	// own descriptor once Start returns: the caller may close the file
	// then); any other reader is copied through a pipe by a
	// goroutine that ends when the reader returns an error or EOF, or is
	// abandoned when the run ends (as os/exec does after WaitDelay).
	Stdin io.Reader

	// Timeout bounds the run, from the moment the command started
	// (Result.Start: Start returns then). When it expires, the tree is sent
	// StopSignal (and SIGCONT, so stopped processes see it), then SIGKILL
	// after Grace. Zero means no timeout.
	Timeout time.Duration

	// Grace is how long the tree has to exit after StopSignal before SIGKILL.
	// A process that joins the tree during the grace gets StopSignal too
	// (a shell may start a command just after the signal reached it).
	// Zero means DefaultGrace; negative means SIGKILL at once.
	Grace time.Duration

	// Drain bounds how long the output pipes are read after the main process
	// exits (or the tree is killed) when something else still holds them
	// open. Zero means DefaultDrain; negative means no wait at all.
	Drain time.Duration

	// MaxOutput caps the bytes kept of each stream (head and tail halves).
	// Zero means DefaultMaxOutput; negative keeps nothing but the count.
	MaxOutput int

	// SpillDir, if set, receives a file per stream holding everything the
	// stream carried. A spill file is removed at the end when nothing was
	// dropped from its stream (the result then holds it all); otherwise its
	// path is in Output.SpillPath and the caller owns it.
	SpillDir string

	// Stdout and Stderr, if set, receive each stream as it arrives, in
	// addition to the capture. They are called from the reading goroutines
	// and must not block for long: a blocked writer stalls the pipe, and
	// Wait does not return before the writer does.
	Stdout, Stderr io.Writer

	// Credential, if set, runs the command as another user and group. It
	// needs the privilege to switch to them.
	Credential *Credential

	// Limits caps the tree's process count and memory where the kernel
	// offers it (cgroup v2 with the pids and memory controllers). What was
	// applied is reported in Result.LimitsNote.
	Limits Limits

	// Leftovers says what happens to processes still alive when the main
	// process exits: kill them after the drain (the default), wait for them,
	// or detach them.
	Leftovers corral.Leftovers

	// Containment picks a tier; the default picks the strongest available.
	// Asking for a tier the machine cannot provide makes Start fail.
	Containment corral.Containment

	// StopSignal is the first signal of the escalation; zero means SIGTERM.
	// On Windows, SIGINT and SIGTERM become CTRL_BREAK_EVENT for the
	// command's process group when it shares corral's console; otherwise
	// the tree is terminated at once.
	StopSignal syscall.Signal

	// Label names the run in places people read, such as its cgroup.
	Label string

	// Sandbox confines the run (see corral.Sandbox and docs/sandbox.md).
	// The working directory (Dir, or the supervisor's) is the workspace.
	// The zero value runs the command unconfined. When the confinement
	// asked for cannot be built here, Start fails with an error wrapping
	// ErrSandboxUnavailable that says what is missing, and nothing runs.
	Sandbox corral.Sandbox

	// Enclosure, if set, runs the command inside a sandbox it shares with
	// other runs (see NewEnclosure). Sandbox must then be zero.
	Enclosure *Enclosure

	// Stdio, if set, is given to the command as its standard input, output
	// and error as they are, the way a shell starts a command: no pipe sits
	// in between, so the two streams keep their order, a terminal is seen
	// as a terminal and nothing is copied. Nothing is captured or drained:
	// Result.Stdout and Result.Stderr are empty, and Stdin, Stdout, Stderr,
	// SpillDir and Drain are not used. A nil entry is the null device. The
	// files stay the caller's: Start does not close them.
	Stdio *[3]*os.File

	// ShareGroup runs the command in the supervisor's session and process
	// group, as a shell runs a job, instead of a session of its own: it
	// keeps the controlling terminal, may read it while the group is the
	// terminal's foreground group, and the terminal's signals (Ctrl-C,
	// Ctrl-Z) reach it as they reach the supervisor. On Linux the cgroup
	// tier holds the tree or, without one, an init in the same group (the
	// process-group tier cannot: the group is the supervisor's own, and
	// Start fails with ErrTierUnavailable); a sandbox cannot share the
	// group. On macOS and the BSDs the command leads a group of its own in
	// the supervisor's session. Windows has no such thing and ignores it.
	ShareGroup bool

	// Guard, if set, keeps the run from this process's secrets (see
	// Guard): its own pid, mount and IPC namespaces, the paths it hides,
	// no device, no capability beyond GuardCapabilities. Nil runs the
	// command unguarded. Not taken with an Enclosure.
	Guard *Guard

	// Hold, if not nil, holds the command back until it is closed. Start
	// makes the run ready (on Linux: its tier, its cgroup leaf and
	// guardian, or its init, which a sandbox's builds it after) and then
	// waits for Hold before the command starts; if ctx ends first, Start
	// returns an error wrapping ctx's and nothing ran or is left. The
	// caller does its own set-up meanwhile, and what it set up is in
	// place before the command's first instruction: corral run installs
	// its signal handlers so, beside Start's work rather than before it.
	// A held Start counts among the Starts in flight (64 at most wait
	// for a thread at once), and Timeout starts with the command.
	Hold <-chan struct{}
}

// Credential names the user and groups to run a command as.
type Credential struct {
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups; nil means none
}

// Limits caps the resources of a run's whole tree. Zero means no limit.
type Limits struct {
	// Pids is the most processes and threads the tree may hold at once.
	Pids int
	// Memory is the most bytes of memory the tree may use; beyond it the
	// kernel's OOM killer acts inside the tree only.
	Memory int64
}

func (s *Spec) grace() time.Duration { return setting.Or(s.Grace, DefaultGrace) }

func (s *Spec) drain() time.Duration { return setting.Or(s.Drain, DefaultDrain) }

func (s *Spec) maxOutput() int { return setting.Or(s.MaxOutput, DefaultMaxOutput) }
