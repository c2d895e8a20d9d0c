//go:build mutation_logkept

// Mutant: a run's log file stays open for the run's life, not only while
// a batch is written: a descriptor more a run in the service.
// Guarantee: 3. bounded memory (a live run's log holds no descriptor)
// Caught: ./service/internal/runlog TestALogHoldsNoDescriptorBetweenBatches

package mutant

// LogKept, mutated: kept open.
const LogKept = true
