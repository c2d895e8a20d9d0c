//go:build !mutation_sandboxdetects

package mutant

// SandboxDetects, when true: a sandboxed run that needs no cgroup (no limits, no tier asked for) still finds and makes this process's cgroup directory first.
const SandboxDetects = false
