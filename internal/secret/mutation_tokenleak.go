//go:build mutation_tokenleak

// Mutant: a secret taken from the environment stays there.
// Guarantee: 8. the MCP server's token reaches no command
// Caught: ./cmd/corral TestMCPTokenReachesNoCommand/env
// Caught: ./cmd/corral TestMCPServiceFindsTheTokenAsTheCLIDoes/env
// Caught: ./internal/secret TestFromEnvLeavesNoTrace

package secret

import "os"

// FromEnv, mutated for the CI's mutation step (.ci/mutations): it reads
// the variable and leaves it in the environment and the environment
// block. Built only with the tag mutation_tokenleak.
func FromEnv(name string) (string, error) { return os.Getenv(name), nil }
