//go:build !mutation_leaffdkept

package mutant

// LeafFDKept, when true: a run keeps its cgroup leaf's descriptor while it runs: four descriptors a run instead of three.
const LeafFDKept = false
