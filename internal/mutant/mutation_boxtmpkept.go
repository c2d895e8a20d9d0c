//go:build mutation_boxtmpkept

// Mutant: the private /tmp of a sandbox whose supervisor was killed stays
// on the host for good.
// Guarantee: 2. nothing left behind (a killed supervisor's sandbox files)
// Caught: ./proc TestSupervisorKilledTakesItsTreeWithIt
// Caught: ./cmd/corral TestSandboxedRunSweepsADeadSupervisorsPrivateTmp

package mutant

// BoxTmpKept, mutated: nothing sweeps the dead supervisors' directories.
const BoxTmpKept = true
