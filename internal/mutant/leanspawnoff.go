//go:build !mutation_leanspawnoff

package mutant

// LeanSpawnOff, when true: a supervisor holding many descriptors starts every run from its own descriptor table, whose close-on-exec pass each child pays.
const LeanSpawnOff = false
