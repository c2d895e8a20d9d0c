//go:build mutation_enclosureidlekept

// Mutant: an enclosure closes without letting go of its runs' idle inits:
// their control sockets and pidfds stay open in corral after Close, until
// the pool's check finds the inits dead.
// Guarantee: 2. nothing left behind (no descriptor outlives its owner)
// Caught: ./proc TestEnclosureReusesItsInitsAndLeavesNothing

package mutant

// EnclosureIdleKept, mutated: Close leaves the idle inits in the pool.
const EnclosureIdleKept = true
