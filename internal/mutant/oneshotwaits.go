//go:build !mutation_oneshotwaits

package mutant

// OneShotWaits, when true: the init of a run that is its only one (a sandbox's) waits for corral's Exit once the run is over, instead of going at once.
const OneShotWaits = false
