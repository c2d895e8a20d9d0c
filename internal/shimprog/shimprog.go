// Package shimprog says which program a supervisor starts its shims from
// (a run's init, an enclosure's holder, the cgroup tier's guardian; see
// internal/shim).
//
// Every program that imports proc has the shim in it, so the floor is the
// program itself, re-executed through /proc/self/exe. But a shim's start
// is a whole program's start, paid once per run or per supervisor, and
// corral's own binary links the CLI, the MCP server and the task service:
// its start costs three small Go programs'. So the corral command ships a
// companion, corral-shim (cmd/corral-shim), built from internal/shim and
// what it imports alone, and its runs start their shims from it when it
// sits beside corral's executable and was built from the same source (the
// same module version, VCS revision and state, Go release, target and
// build tags). Anything else — another program embedding proc, a
// companion from another build, none at all — starts its shims from
// itself, as before: the guarantees are the same, only the start is
// slower.
package shimprog

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
)

// Name is the companion's file name, beside corral's executable.
const Name = "corral-shim"

// Self is the program itself, the fallback.
const Self = "/proc/self/exe"

// module is the module whose commands may have the companion.
const module = "github.com/corralrun/corral"

// Path returns the program to start a shim from: the companion, or Self.
// It looks once per process (reading the companion's build information,
// a few system calls) and keeps the answer.
func Path() string { return path() }

var path = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return Self
	}
	return choose(filepath.Join(filepath.Dir(exe), Name))
})

// choose returns companion if it was built from the same source as this
// program, else Self.
func choose(companion string) string {
	self, ok := debug.ReadBuildInfo()
	if !ok || self.Main.Path != module || self.Path == module+"/cmd/corral-shim" {
		return Self
	}
	other, err := buildinfo.ReadFile(companion)
	if err != nil || !sameBuild(self, other) {
		return Self
	}
	return companion
}

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
