//go:build mutation_boxtmpsweepskipped

// Mutant: a sandbox's start no longer sweeps the private /tmp directories that dead supervisors left.
// Guarantee: 2. nothing left behind (a killed supervisor's sandbox files go at a later corral's first sandbox, swept once its command has started)
// Caught: ./cmd/corral TestSandboxedRunSweepsADeadSupervisorsPrivateTmp

package mutant

// BoxTmpSweepSkipped, mutated: a sandbox's start no longer sweeps the private /tmp directories that dead supervisors left.
const BoxTmpSweepSkipped = true
