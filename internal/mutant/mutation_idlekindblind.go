//go:build mutation_idlekindblind

// Mutant: a plain run takes any idle init, of the kind this process no
// longer starts too: a Go init kept idle serves the runs of a process
// whose starts make native ones (and the other way round).
// Guarantee: 7. the tree dies with its supervisor (each kind of init is the one its tests hold to it)
// Caught: ./proc TestIdleInitsAreOfTheKindAStartWouldMake

package mutant

// IdleKindBlind, mutated: either kind.
const IdleKindBlind = true
