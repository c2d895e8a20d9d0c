// Package shell is the shell tool an agent calls to run commands: one-shot
// runs, persistent sessions whose state survives timeouts, crashes, exit,
// exec, set -e and syntax errors, background jobs, a policy guardrail, an
// approval hook, an audit trail with secrets redacted, and results rendered
// for a model in a form command output cannot spoof.
//
// Every process runs under [github.com/corralrun/corral/proc], so every
// command has its guarantees: it returns within its timeout plus the grace
// and drain periods, its whole process tree is gone when it returns,
// memory stays bounded however much it prints, what it printed before a
// timeout is kept, and its stdin is the null device.
//
// A [Tool] holds the configuration. [Tool.Run] runs a command in a fresh
// shell; [Tool.NewSession] opens a [Session], where cd, variables,
// functions, aliases and shell options carry over from one command to the
// next; [Session.Start] and [Tool.Start] start background [Job]s whose
// output is read incrementally.
//
// # How sessions keep their state
//
// Each command of a session runs in a fresh bash, as its own supervised
// process tree, which first restores the session's state (working
// directory, environment, other variables, functions, aliases, umask,
// shopt and set -o options) and, when the command ends, saves the new
// state to files named for that call. The save runs from bash's EXIT and
// TERM traps, so it happens on a normal end, on exit, on a set -e failure,
// after a syntax error and when a timeout's SIGTERM ends the command. A
// command that never gets to save (SIGKILL, a crash, exec of another
// program) leaves the state as the previous command saved it, and its
// result says so with SessionRestarted. There is no long-lived shell to
// lose, no sentinel to forge, and a background process started with & in
// a command ends with that command, as the process tree of every command
// does: long-running processes belong in background jobs.
//
// # Policy is a guardrail, not a sandbox
//
// [Policy] patterns are checked against every line and every simple
// command of a command line, but a determined command gets around any
// pattern (eval, a script file, an interpreter). Use it to catch mistakes
// and to keep an honest agent on its task; contain untrusted code with
// users, containers or virtual machines.
package shell
