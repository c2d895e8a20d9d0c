//go:build !mutation_cancelnoexitgrace

package mutant

// CancelNoExitGrace, when true: a cancelled headless turn whose agent
// answered SIGINT with its result is stopped at that result, not given the
// rest of the interrupt grace to exit by itself.
const CancelNoExitGrace = false
