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
	// the program the tests run (see mutationTags). A mutant of another
	// package comes in GOFLAGS' -tags (.ci/mutations), which a -tags of
	// the command line would replace: none is given without a mutant here.
	args := []string{"build", "-o", corralBin, "."}
	if len(mutationTags) > 0 {
		args = append([]string{"build", "-tags", strings.Join(mutationTags, ",")}, args[1:]...)
	}
	build := exec.Command("go", args...)
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
