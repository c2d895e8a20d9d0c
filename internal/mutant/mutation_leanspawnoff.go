//go:build mutation_leanspawnoff

// Mutant: a supervisor holding many descriptors starts every run from its own descriptor table, whose close-on-exec pass each child pays.
// Guarantee: 3. bounded memory (a start's cost does not grow with the runs held)
// Caught: ./proc TestManyDescriptorsStayOutOfTheChildsStart

package mutant

// LeanSpawnOff, mutated: a supervisor holding many descriptors starts every run from its own descriptor table, whose close-on-exec pass each child pays.
const LeanSpawnOff = true
