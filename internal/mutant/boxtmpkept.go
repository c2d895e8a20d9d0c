//go:build !mutation_boxtmpkept

package mutant

// BoxTmpKept, when true, keeps the private /tmp directories that killed
// supervisors' sandboxes left.
const BoxTmpKept = false
