//go:build mutation_leanmemfdpath

// Mutant: a start from the lean thread executes a program in a memory file (the native init) by the process's descriptor number, which the thread's own table lacks.
// Guarantee: 3. bounded memory (a supervisor holding many descriptors still starts init-tier runs)
// Caught: ./proc TestManyDescriptorsStayOutOfTheChildsStart

package mutant

// LeanMemfdPathKept, mutated: a start from the lean thread executes a program in a memory file (the native init) by the process's descriptor number, which the thread's own table lacks.
const LeanMemfdPathKept = true
