//go:build !mutation_prestartchurn

package mutant

// PrestartChurn, when true: every run that takes an idle init has another started, however full the pool, so a supervisor running one command after another starts an init for each and pushes out the one coming back.
const PrestartChurn = false
