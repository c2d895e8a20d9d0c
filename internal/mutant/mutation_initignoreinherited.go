//go:build mutation_initignoreinherited

// Mutant: a Go init (a sandbox's) ignores TERM, INT, HUP, QUIT and PIPE
// through os/signal: its command inherits them ignored, and outlives every
// stop signal.
// Guarantee: 5. no inherited surprises (the command starts with a direct child's signals)
// Caught: ./proc TestCommandsStartWithTheSignalsADirectChildWould

package mutant

// InitIgnoreInherited, mutated: through os/signal.
const InitIgnoreInherited = true
