//go:build mutation_idleunawaited

// Mutant: a run's init goes back to the pool without corral waiting for it
// to kill what left the process group: Run returns while a daemon of the
// tree may still live, and without the count of what the init killed.
// Guarantee: 2. exact trees, nothing left behind
// Caught: ./proc TestRunEndsWithWhatLeftTheGroup

package mutant

// IdleUnawaited, mutated: the init's Idle answer is not waited for.
const IdleUnawaited = true
