//go:build !mutation_exitingsignalled

package mutant

// ExitingSignalled, when true, has a process already in the kernel's exit
// read as alive: it is signalled and counted among those killed.
const ExitingSignalled = false
