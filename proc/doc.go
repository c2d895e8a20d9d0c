// Package proc runs a command under supervision: it starts the command
// inside a containment that holds its whole process tree, enforces a
// deadline on that tree, keeps a bounded head and tail of its output, and
// reports what happened without guessing.
//
// It plays the part of os/exec for commands that must not outlive their
// caller. Where os/exec waits for the process it started, proc waits for,
// and if need be kills, everything that process started: background jobs,
// double forks, daemons, processes that ignore SIGTERM or stop themselves,
// grandchildren that hold the output pipes open.
//
// A Spec describes the command; its zero values mean something sensible
// (no timeout, stdin from the null device, the supervisor's environment,
// the strongest containment available). Run starts the command and waits;
// Start returns a Process to watch (Done, Output), steer (Stop, Signal) and
// wait for (Wait):
//
//	res, err := proc.Run(ctx, &proc.Spec{
//		Args:    []string{"bash", "-c", "make test"},
//		Timeout: 10 * time.Minute,
//	})
//	// err: the command did not start (ErrNotFound, ErrNotExecutable,
//	// ErrTierUnavailable, ErrSandboxUnavailable, ErrLimit, a bad Spec).
//	// res: ExitCode, Signal, TimedOut, Cancelled, Duration, Stdout and
//	// Stderr (head and tail, with counts), Containment, Killed, Survivors.
//
// # Guarantees
//
// Wait returns no later than Timeout + Grace + Drain + 50 ms after the
// command started (after Stop or the context's end for those), and SIGKILL
// comes within 50 ms of the grace's end, counted on the supervisor's own
// clock: what the scheduler withholds from it, or from processes it has
// SIGKILLed, is added in wall time. Each Result records corral's actions
// and their lateness on that clock (Result.Timeline). On timeout, cancellation or Stop the tree
// gets StopSignal and SIGCONT, then SIGKILL after Grace; output held open
// by leftovers is read for at most Drain. Output printed before a timeout
// is in the Result. Memory per stream stays near MaxOutput however much is
// printed. What happens to processes still alive when the main process
// exits is Spec.Leftovers' choice: killed (the default), waited for, or
// detached.
//
// Each Process has a supervising goroutine, one per output stream and one
// waiting for the main process, plus one copying Spec.Stdin when it is a
// reader other than an *os.File. All have ended when Wait returns, except a
// stdin copier blocked in its reader's Read.
//
// # Many runs at once
//
// A plain run of the cgroup tier holds three descriptors (its two output
// pipes and the command's pidfd), four goroutines and a few KiB of the
// supervisor's memory while it runs, and no OS thread; a run of another
// tier, or sandboxed, holds an init too, and two descriptors more. At most
// 64 runs at once hold a thread of their own while they end (corral's own
// clock, see Timeline). The first Start raises the soft RLIMIT_NOFILE to
// the hard limit (the commands keep the limit the program started with).
// CheckCapacity says, before any run starts, whether n more runs fit the
// descriptors and processes this process and machine allow, naming the
// limit they would hit (CheckCapacityFor counts what runs of a given Spec
// hold: one whose output is Stdio holds no pipe); Start fails with the
// same ErrLimit once one is hit.
//
// A start does not grow dearer with the runs held: a child's exec closes
// each close-on-exec descriptor its parent had, so once this process
// holds a few hundred descriptors, runs are started from a thread of
// corral's whose descriptor table holds only what the child is given
// (10,000 concurrent runs started in 14 s rather than 30 s, see
// docs/benchmarks.md). That thread ends a quarter of a second after
// the last such start.
//
// # Tracing
//
// Each run is an OpenTelemetry span, proc.run (with proc.teardown below it
// when the tree had to be stopped), under the span the context carries,
// and the command gets TRACEPARENT naming it (docs/observability.md). The
// span comes from the provider SetTracerProvider installed, else from the
// provider of the context's span, else there is none and nothing is
// recorded; the same holds for the packages built on proc (shell,
// headless, mcpserver, service). proc links the OpenTelemetry API
// packages only, not go.opentelemetry.io/otel and its global provider,
// which would bring net/http into every program that runs a command.
//
// # Platforms
//
// What "the whole tree" means, and how exactly it is counted, depends on
// the containment tier, which depends on the system. Result.Containment and
// Result.ContainmentNote say which tier ran and why a stronger one did not.
//
// Linux: the cgroup tier (root, or a delegated cgroup v2 subtree) holds
// every descendant, escapees included; the subreaper tier (no privileges)
// holds every descendant in practice (see docs/proc.md for its one
// limit); the process group tier holds the processes that stay in the
// group. In the cgroup and subreaper tiers, when Wait returns no process of
// the tree is alive and none is a zombie, unless the kernel holds one in
// uninterruptible sleep (reported in Survivors and SurvivorNote). Killed
// and Survivors count processes. Reclaim kills what a dead supervisor left:
// the cgroup's members, or the main process (matched by pid and start
// time) and its session and groups.
//
// macOS and the BSDs: the process group tier only. Processes that leave the
// group (setsid, setpgid) are neither killed nor counted. Killed and
// Survivors count the group, not its members: Killed is 1 when the group
// was signalled, Survivors is 1 when the group still had a member at the
// end, whatever their number. Reclaim sends SIGKILL to the process group
// the handle's main process led, if one exists, and returns 1 (the group
// existed; its size is not known) or 0 (no such group). No start time is
// recorded there, so Reclaim cannot prove the group is still the run's: if
// the run's group had ended and a new process took its id for a group of
// its own, that group is killed. Call it right after the crash it is for.
//
// Windows: a Job Object with kill-on-close, assigned before the process
// runs, holds every descendant; Killed and Survivors count the job's
// processes. The job dies with its supervisor, so Reclaim has nothing to
// do and returns 0.
//
// Outside Linux, a Spec that asks for a sandbox (Spec.Sandbox) fails with
// ErrSandboxUnavailable, and one that asks for the task guard
// (Spec.Guard) with ErrGuardUnavailable; nothing runs.
package proc
