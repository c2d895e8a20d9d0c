//go:build mutation_scriptkept

// Mutant: the service keeps a shell task's script open for the run's life (one descriptor more a run).
// Guarantee: 3. bounded memory (at most four descriptors a run)
// Caught: ./service/internal/executor TestAShellRunHoldsThreeDescriptors

package mutant

// ScriptKept, mutated: the service keeps a shell task's script open for the run's life.
const ScriptKept = true
