// Package mutant holds the switches of CI's mutation step (.ci/mutations).
//
// Each switch is a constant: false in every normal build, true only in a
// build with its mutation tag, so that the code testing it compiles to
// nothing otherwise. A switch breaks one guarantee on purpose; the mutation
// step builds with its tag and proves that the tests named in the switch's
// mutation_TAG.go file fail. A mutant that is a whole function swapped for
// a broken twin lives beside that function instead (its package's
// mutation_TAG.go); this package is for a break in the middle of a longer
// function, where a twin would copy the whole of it.
//
// Each switch is two files here: NAME.go (//go:build !mutation_TAG, the
// constant false) and mutation_TAG.go (the constant true, with the header
// .ci/mutations reads: Mutant, Guarantee and Caught lines).
package mutant
