//go:build !mutation_inheritunchecked

package mutant

// InheritUnchecked, when true: the pool of idle inits hands out an init
// started before this process changed its user, umask, resource limits or
// OOM score adjustment, whose command then starts with the old ones.
const InheritUnchecked = false
