//go:build mutation_leaffdkept

// Mutant: a run keeps its cgroup leaf's descriptor while it runs: four descriptors a run instead of three.
// Guarantee: 3. bounded memory (descriptors per run)
// Caught: ./proc TestThousandRunsHoldBoundedResources/cgroup

package mutant

// LeafFDKept, mutated: a run keeps its cgroup leaf's descriptor while it runs: four descriptors a run instead of three.
const LeafFDKept = true
