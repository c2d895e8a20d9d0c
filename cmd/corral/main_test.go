package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/testutil"
)

// corralBin is the corral binary built once for the tests that run it as a
// real process.
var corralBin string

func TestMain(m *testing.M) {
	leftovers := testutil.IsolateTemp()
	dir, err := os.MkdirTemp("", "corral-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	corralBin = filepath.Join(dir, "corral")
	// The same mutation tags as this test binary, so that a mutant is in
	// the program the tests run (see mutationTags).
	// corral-shim beside it, as go install ./cmd/... puts it: the runs of
	// the tests start their shims from it (internal/shimprog).
	for _, b := range [][2]string{{corralBin, "."}, {filepath.Join(dir, "corral-shim"), "../corral-shim"}} {
		build := exec.Command("go", "build", "-tags", strings.Join(mutationTags, ","), "-o", b[0], b[1])
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", filepath.Base(b[0]), err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	if err := leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
