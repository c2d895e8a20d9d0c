// Package sandbox builds the confinement of corral's sandboxed runs on
// Linux: a view of the file system in a private mount namespace, Landlock,
// a seccomp filter, no capabilities and no_new_privs, and a gate for
// pathname Unix sockets. docs/sandbox.md has the threat model and the
// reasons for each mechanism.
//
// The package runs inside the init, the per-sandbox helper process that
// corral starts with new user, mount, pid, network (unless network host),
// IPC and UTS namespaces. The init calls, in this order:
//
//	Prepare(p)   once per sandbox, right after the clone: the file-system
//	             view, loopback, the proxy listener;
//	Confine(p)   on a locked OS thread, once per command (or once for a
//	             thread that forks every command of a session): restricts
//	             that thread only, then the thread forks the command;
//	Gate(...)    for the notification descriptor Confine returned, for as
//	             long as the commands forked under it live.
//
// Check, which corral calls before it starts an init, says whether this
// machine has the sandbox's mechanisms; the init's clone into its
// namespaces is the last check, and when it fails, Unavailable (Probe's
// answer) says why. Probe says all of it at once, with a clone of its own.
// On systems other than Linux (amd64 or arm64) all three report the
// sandbox unavailable and the other functions refuse.
package sandbox

// Support says which of the sandbox's mechanisms this machine offers.
type Support struct {
	// Namespaces: a process of this user can be cloned into new user,
	// mount, pid, network, IPC and UTS namespaces.
	Namespaces bool

	// MountAPI: open_tree, move_mount, fsopen, fsmount and mount_setattr
	// (Linux 5.12).
	MountAPI bool

	// LandlockABI is the Landlock ABI version the kernel offers, 0 when
	// Landlock is missing or disabled.
	LandlockABI int

	// Seccomp: seccomp filters with user notification (Linux 5.0), and
	// pidfd_open and pidfd_getfd (Linux 5.6) for the Unix socket gate.
	Seccomp bool
}

// landlockUnixABI is the first Landlock ABI that controls connections to
// pathname Unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX); below it the
// seccomp gate does.
const landlockUnixABI = 9

// GateNeeded reports whether connections to pathname Unix sockets go
// through Gate (Landlock below ABI 9 cannot control them).
func (s Support) GateNeeded() bool { return s.LandlockABI < landlockUnixABI }
