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
	build := exec.Command("go", "build", "-tags", strings.Join(mutationTags, ","), "-o", corralBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building corral: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if err := leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
