//go:build linux && !mutation_shimprogsame

package shimprog

import (
	"runtime/debug"
	"slices"
)

// sameBuild reports whether a and b were built from the same source with
// the same settings, as far as the build information tells: the main
// module's version, the Go release and every setting (VCS revision, time
// and modified state, tags, target, flags).
func sameBuild(a, b *debug.BuildInfo) bool {
	if a.Main.Path != b.Main.Path || a.Main.Version != b.Main.Version || a.Main.Sum != b.Main.Sum || a.GoVersion != b.GoVersion {
		return false
	}
	return slices.Equal(a.Settings, b.Settings)
}
