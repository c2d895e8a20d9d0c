//go:build mutation_cancelnoexitgrace

// Mutant: a cancelled turn's agent that answered SIGINT with its result
// gets SIGTERM at once, though the interrupt grace promised it time to
// finish and exit (to save its session on the way out).
// Guarantee: headless: a cancelled agent may finish its step and exit within the interrupt grace
// Caught: ./headless TestCancelLetsTheAgentExitWithinTheInterruptGrace

package mutant

// CancelNoExitGrace, mutated: stopped at its result.
const CancelNoExitGrace = true
