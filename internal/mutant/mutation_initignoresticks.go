//go:build mutation_initignoresticks

// Mutant: an init kept from an earlier run leaves a signal ignored for
// every later command once corral ignored it for one (os/signal's Reset,
// which does not undo Ignore).
// Guarantee: 5. no inherited surprises (signal dispositions)
// Caught: ./proc TestCommandsStartWithTheSignalsADirectChildWould

package mutant

// InitIgnoreSticks, mutated: the signal stays ignored.
const InitIgnoreSticks = true
