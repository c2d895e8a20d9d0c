// Package corral holds the shared vocabulary of corral, a runtime that runs
// shell commands and headless coding agents with deadlines that hold and
// nothing left behind: the words of supervision (Status, ErrorType,
// Output, Containment, EnvMode, Leftovers, Sandbox) and the task service's
// domain (Agent, Execution and its Outcome, Schedule, Slot, Duration) with
// their validation and JSON form. It imports nothing of the supervision
// machinery, so that a client of the service links only this package and
// the standard library.
//
// The packages that do the work build on this vocabulary, bottom up:
//
//   - [github.com/corralrun/corral/capture]: bounded head+tail output capture
//     with spill files and line callbacks.
//   - [github.com/corralrun/corral/proc]: process supervision. Spawns a
//     command inside the strongest containment the machine allows, enforces
//     its timeout, kills its whole process tree and returns an honest
//     [github.com/corralrun/corral/proc.Result].
//   - shell: the agent shell tool (one-shot runs, persistent sessions,
//     background jobs, policy, rendering for a model).
//   - headless: headless agent turns (Claude Code stream-json, Codex exec
//     --json) finalized on the semantic end of the turn.
//   - service: agents, tasks, capacity slots, schedules and execution records.
//
// This package has no behaviour of its own beyond parsing, validating and
// printing its types; it exists so that every layer speaks the same words.
package corral
