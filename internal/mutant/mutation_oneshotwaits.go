//go:build mutation_oneshotwaits

// Mutant: the init of a run that is its only one (a sandbox's) waits for corral's Exit once the run is over, instead of going at once.
// Guarantee: a sandbox's init goes as soon as its run is over, its namespaces coming down while corral ends the run (docs/benchmarks.md, stop 44)
// Caught: ./proc TestSandboxInitGoesOnceItsRunIsOver

package mutant

// OneShotWaits, mutated: the init of a run that is its only one (a sandbox's) waits for corral's Exit once the run is over, instead of going at once.
const OneShotWaits = true
