// Package shim is the small process corral puts between itself and the
// commands it supervises on Linux, so that a run's tree dies with corral
// (guarantee 7) and a sandbox can be built. The shim is the running program
// itself, re-executed through /proc/self/exe with CORRAL_SHIM in its
// environment, or corral's companion corral-shim, a program made of this
// package alone (cmd/corral-shim, chosen by internal/shimprog): this
// package's initialisation recognises the variable and
// runs the shim instead of the program, before main and before any package
// that imports this one is initialised. Every program that imports proc
// has the shim in it, with no change to its main; its own package
// initialisers that do not depend on proc and sort before this package may
// run first in a shim, so they must not start anything.
//
// A shim has one of three roles.
//
// The init holds a run's tree. Corral starts it with a control socket at
// fd 3 and sends it the run: the command's stdin, stdout and stderr and its
// configuration, as descriptors. It forks the command, sends corral pidfds
// of the command and of itself, reaps every process that comes to it and
// reports the command's exit status. A plain init whose tree is gone may
// serve another run: corral keeps a few idle ones, since starting one (an
// exec of this program) costs milliseconds where handing it a run costs a
// round trip. For a sandboxed run it is pid 1 of new user,
// mount, pid, network, IPC and UTS namespaces: it builds the sandbox
// (internal/sandbox), forks the command from a confined thread, and answers
// the Unix-socket gate; corral started it with PR_SET_PDEATHSIG=SIGKILL, so
// when corral dies the kernel kills it and, with it, every process of its
// pid namespace. For a plain run it is a child subreaper with no namespace
// of its own: every orphan of the tree comes to it, and when corral goes
// (its control socket reads end of file) it freezes and kills all of them.
//
// The holder, one per enclosure (a sandbox shared by the runs of a
// session), is pid 1 of the sandbox's namespaces like a sandboxed init. It
// confines one thread for the enclosure's life and, on corral's request,
// forks from it one init per run (a plain one, a subreaper inside the
// sandbox), which talks to corral directly, and, like a plain init, may
// serve the enclosure's next run once its tree is gone. It dies with
// corral, and the kernel kills the whole enclosure with it.
//
// The guardian, one per corral process that uses the cgroup tier, holds a
// pipe at fd 0 whose write end only corral holds. When the pipe reads end
// of file (corral exited, was killed or executed another program), it
// kills every process of every leaf in corral's own cgroup directory
// (cgroup.Root.Owner; a detached run's leaf was moved out of it), waits
// for them to empty and removes them. This Go guardian serves where the
// native one (internal/guardelf, a few hundred bytes of machine code that
// keeps the same contract without a Go program's start) cannot run.
//
// Messages are small JSON objects on a SOCK_SEQPACKET socket, with
// descriptors passed as SCM_RIGHTS (see Conn).
package shim

import (
	"fmt"
	"os"
)

// RoleEnv is the environment variable that makes a process a shim; its
// value is the role.
const RoleEnv = "CORRAL_SHIM"

// ResumeEnv, in the environment of a Go init, says that the native init
// (internal/initelf) executed it in its own process to take over a
// sandbox's run when a command connected a Unix socket it could not
// answer itself (the gate is the Go init's):
// "PID DETACHED ACKED NOTIFY CONFIG [ID TID NR A0 A1 A2]": the command's
// pid (0 once its end is reported), whether corral said Detach, whether
// corral spoke since the run started (Ack), the gate's notification
// descriptor and the configuration's; then, when the native init took the
// call that brought it here from the descriptor (it answers itself the
// connects the gate answers without a wait), that call, for the Go init's gate
// to answer first (sandbox.Pending).
const ResumeEnv = "CORRAL_SHIM_RESUME"

// Roles.
const (
	RoleInit     = "init"
	RoleHolder   = "holder"
	RoleGuardian = "guardian"
)

// ControlFD is the descriptor of an init's or holder's control socket;
// its stdin, stdout and stderr are the null device.
const ControlFD = 3

// Comm is the name every shim gives itself (its main thread's, the one
// /proc/PID/stat shows, and keeps as a zombie): a supervisor that inherits
// the zombie of another corral process's shim knows it by this name, and
// reaps it, since nobody else can be waiting for it.
const Comm = "corral-shim"

// ExitShimFailed is a shim's exit status when it failed before or instead
// of running the command; the reason went to corral over the control
// socket.
const ExitShimFailed = 125

func init() {
	role := os.Getenv(RoleEnv)
	if role == "" {
		return
	}
	// The runtime keeps the main goroutine on the main thread while
	// packages initialise, and so does this process from now on: the main
	// thread stands for the whole process (the kernel's thread-group
	// leader), and must never be the confined one. The shim's work runs on
	// another goroutine, free to move between threads: a goroutine locked
	// to its thread hands the processor to another thread each time it
	// blocks, and takes it back when it wakes (two thread switches per
	// message and per signal, a fifth of an init's time for a short run).
	// The main goroutine waits for what must run on the main thread itself
	// (onMainThread).
	nameSelf()
	go func() { os.Exit(run(role)) }()
	for f := range mainThread {
		f()
	}
}

// mainThread takes the work that must run on the main thread.
var mainThread = make(chan func())

// onMainThread runs f on the process's main thread (the thread-group
// leader, whose per-thread state stands for the process's: its parent-death
// signal), and returns once it has.
func onMainThread(f func()) {
	done := make(chan struct{})
	mainThread <- func() { f(); close(done) }
	<-done
}

func run(role string) int {
	switch role {
	case RoleInit, RoleHolder:
		return runInit()
	case RoleGuardian:
		return runGuardian()
	}
	fmt.Fprintf(os.Stderr, "corral shim: unknown role %q\n", role)
	return ExitShimFailed
}
