//go:build mutation_secretfdkept

// Mutant: a secret read from /dev/fd/N leaves the inherited descriptor N open, for every command the process starts to inherit.
// Guarantee: 8. the MCP server's token reaches no command
// Caught: ./internal/secret TestFromFileClosesTheInheritedDescriptorItRead

package mutant

// SecretFDKept, mutated: the descriptor stays open.
const SecretFDKept = true
