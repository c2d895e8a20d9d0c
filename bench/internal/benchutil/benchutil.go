// Package benchutil holds the small helpers that the benchmark programs
// under bench share: stopping on an error, building the binaries they
// measure, and reducing a run's times to the figures they print.
package benchutil

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Check returns if err is nil. Otherwise it prints "bench: " and the
// error to standard error and ends the program with exit status 1, as
// Exit does.
func Check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		Exit(1)
	}
}

// temps are the directories TempDir made and that are not yet removed.
var temps struct {
	sync.Mutex
	dirs []string
}

// TempDir makes a new temporary directory, as os.MkdirTemp does (ending
// the program as Check does if it cannot). The caller removes it when it
// is done; if the program ends through Exit or Check first, Exit does.
func TempDir(dir, pattern string) string {
	d, err := os.MkdirTemp(dir, pattern)
	Check(err)
	temps.Lock()
	temps.dirs = append(temps.dirs, d)
	temps.Unlock()
	return d
}

// Exit ends the program with code once it has removed the temporary
// directories TempDir made (os.Exit runs no deferred removal).
func Exit(code int) {
	temps.Lock()
	for _, d := range temps.dirs {
		os.RemoveAll(d)
	}
	temps.Unlock()
	os.Exit(code)
}

// BuildCorral builds all of corral's programs (./cmd/...: corral and the
// companions it executes or starts, corral-client, corral-mcp,
// corral-serve, corral-shim and corral-otlp) into dir, as go install ./cmd/... installs them beside
// each other, with env added to the build's environment, and returns
// corral's path. dir is made if it does not exist. If the build fails, it
// ends the program as Check does.
func BuildCorral(dir string, env ...string) string {
	Check(os.MkdirAll(dir, 0o755))
	build := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
	build.Env = append(os.Environ(), env...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	Check(build.Run())
	return filepath.Join(dir, "corral")
}

// BuildHello builds the smallest Go program, one whose main does nothing,
// and returns the path of its binary: the floor of any Go program's start.
// Its source and binary are written under dir. If a step fails, it ends
// the program as Check does.
func BuildHello(dir string) string {
	return BuildGo(dir, "hello", "package main\n\nfunc main() {}\n")
}

// BuildGo builds a Go program of one file, main.go with src, as module
// name under dir, and returns the path of its binary (dir/name-bin). If a
// step fails, it ends the program as Check does.
func BuildGo(dir, name, src string) string {
	srcDir := filepath.Join(dir, name)
	Check(os.MkdirAll(srcDir, 0o755))
	Check(os.WriteFile(filepath.Join(srcDir, "main.go"), []byte(src), 0o644))
	Check(os.WriteFile(filepath.Join(srcDir, "go.mod"), []byte("module "+name+"\n\ngo 1.26\n"), 0o644))
	bin := filepath.Join(dir, name+"-bin")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir, build.Stderr = srcDir, os.Stderr
	Check(build.Run())
	return bin
}

// Quantile returns the p quantile of d (p from 0 to 1) in milliseconds:
// the element at index int(p*(len(d)-1)) of d sorted, so the lower of two
// neighbours when the quantile falls between them, counted in whole
// microseconds. It does not reorder d. d must not be empty.
func Quantile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}

// Median returns the element at index len(v)/2 of v sorted: the middle
// one, or the upper of the two middle ones when len(v) is even. It does
// not reorder v. v must not be empty.
func Median[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// MS returns d as milliseconds with two decimals and the unit, such as
// "1.25 ms", counted in whole microseconds (the nanoseconds below are
// dropped before rounding).
func MS(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
