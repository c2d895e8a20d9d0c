//go:build mutation_sandboxdetects

// Mutant: a sandboxed run that needs no cgroup (no limits, no tier asked for) still finds and makes this process's cgroup directory first.
// Guarantee: a sandboxed corral command leaves no cgroup directory of its own behind, and spends nothing making one (docs/benchmarks.md, stop 44)
// Caught: ./cmd/corral TestSandboxedRunMakesNoCgroupDirectory

package mutant

// SandboxDetects, mutated: a sandboxed run that needs no cgroup (no limits, no tier asked for) still finds and makes this process's cgroup directory first.
const SandboxDetects = true
