//go:build mutation_shimprogsame

// Mutant: corral takes any corral-shim beside it, whatever source or settings it was built from.
// Guarantee: 2, 7. a run's helpers are the ones built with corral (no stale init or guardian)
// Caught: ./internal/shimprog TestSameBuildTellsBuildsApart

package shimprog

import "runtime/debug"

// sameBuild, mutated for the CI's mutation step (.ci/mutations): every
// build matches. Built only with the tag mutation_shimprogsame.
func sameBuild(a, b *debug.BuildInfo) bool { return a.Main.Path == b.Main.Path }
