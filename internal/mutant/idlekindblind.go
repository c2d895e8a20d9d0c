//go:build !mutation_idlekindblind

package mutant

// IdleKindBlind, when true, has a plain run take an idle init of either
// kind, native or Go, whichever this process would start now.
const IdleKindBlind = false
