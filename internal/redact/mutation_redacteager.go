//go:build mutation_redacteager

// Mutant: The redactor's tables are made at package initialisation: every corral command pays for them at start.
// Guarantee: start-up: a command pays only for what it uses (issue 27)
// Caught: ./internal/redact TestTablesAreMadeOnFirstUseNotAtStart

package redact

// Made at initialisation, mutated for the CI's mutation step
// (.ci/mutations). Built only with the tag mutation_redacteager.
var _ = func() bool { ensureTables(); return true }()
