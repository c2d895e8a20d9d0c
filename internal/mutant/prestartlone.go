//go:build !mutation_prestartlone

package mutant

// PrestartLone, when true: inits are started ahead at the first start that finds none idle, so a program that starts one run (the CLI) starts eight inits it never uses.
const PrestartLone = false
