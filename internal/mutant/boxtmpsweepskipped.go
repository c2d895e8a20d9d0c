//go:build !mutation_boxtmpsweepskipped

package mutant

// BoxTmpSweepSkipped, when true: a sandbox's start no longer sweeps the private /tmp directories that dead supervisors left.
const BoxTmpSweepSkipped = false
