//go:build mutation_initfdkept

// Mutant: a run whose init is this process's child keeps the init's pidfd
// open while its command runs: five descriptors a run, not four.
// Guarantee: 3. bounded memory (four descriptors a run on every tier)
// Caught: ./proc TestThousandRunsHoldBoundedResources/subreaper
// Caught: ./proc TestThousandRunsHoldBoundedResources/pgroup

package mutant

// InitFDKept, mutated: kept.
const InitFDKept = true
