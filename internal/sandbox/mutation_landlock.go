//go:build mutation_landlock

// Mutant: Landlock grants every right beneath each writable root's parent, not beneath the root: a root is writable outside it.
// Guarantee: 8. confinement that holds: writes only in the writable roots (Landlock's wall)
// Caught: ./internal/sandbox TestLandlockAloneKeepsWritesInTheRoots

package sandbox

import "path/filepath"

// landlockWritable, mutated for the CI's mutation step (.ci/mutations):
// the rule for each writable root is given to its parent directory, so
// that the root's siblings are writable too. The read-only mounts still
// hold; Landlock alone no longer does. Built only with the tag
// mutation_landlock.
func landlockWritable(p *Policy) []string {
	var dirs []string
	for _, r := range p.WritableRoots() {
		dirs = append(dirs, filepath.Dir(r))
	}
	return append(dirs, "/tmp")
}
