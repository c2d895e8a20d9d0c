//go:build mutation_straysignals

// Mutant: no subcommand catches SIGQUIT, SIGUSR1, SIGUSR2 or SIGALRM: SIGQUIT ends corral with the Go runtime's stack dump.
// Guarantee: signals never crash corral (issue 21: every subcommand)
// Caught: ./cmd/corral TestStraySignalsEndNoSubcommand/shell
// Caught: ./cmd/corral TestStraySignalsEndNoSubcommand/headless
// Caught: ./cmd/corral TestStraySignalsEndNoSubcommand/mcp

package cliflag

// CatchStraySignals, mutated for the CI's mutation step (.ci/mutations):
// it catches nothing, in corral and in its companions. Built only with
// the tag mutation_straysignals.
func CatchStraySignals(bool) {}
