//go:build mutation_overrunfinishes

// Mutant: a run in flight goes on spending after its agent's budget window is spent.
// Guarantee: 10. spend is bounded (per agent window, fleet-wide)
// Caught: ./service TestBudgetWindowEndsRunsAndRefusesTasksOnceSpent
// Caught: ./cmd/corral TestFleetTwoWorkersNeverOverspendAWindow

package mutant

// OverrunFinishes lets every run finish whatever its agent's budget says.
const OverrunFinishes = true
