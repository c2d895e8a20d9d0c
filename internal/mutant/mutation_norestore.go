//go:build mutation_norestore

// Mutant: a resumed attempt does not restore the session's saved state, so only the worker that ran the session before can resume it.
// Guarantee: 9. runs outlive their workers (resume on any worker)
// Caught: ./cmd/corral TestFleetResumesAKilledTurnOnAnotherWorker/claude
// Caught: ./cmd/corral TestFleetResumesAKilledTurnOnAnotherWorker/codex

package mutant

// NoRestore skips the restore of a session's state.
const NoRestore = true
