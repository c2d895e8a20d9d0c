package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/corralrun/corral/internal/servetest"
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
	// With its companions beside it (servetest.Commands: corral-client,
	// corral-mcp, corral-serve, corral-shim), as go install ./cmd/... puts
	// them, and the same mutation tags as this test binary, so that a
	// mutant is in the programs the tests run.
	if corralBin, err = servetest.BuildCorral(dir, servetest.MutationTags()...); err != nil {
		fmt.Fprintf(os.Stderr, "building corral: %v\n", err)
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

// copyCorral copies corral and its companions (servetest.Commands) into
// dir, for a service run as a user who cannot reach corralBin's private
// directory, and returns the copy of corral.
func copyCorral(t *testing.T, dir string) string {
	t.Helper()
	for _, name := range servetest.Commands {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(corralBin), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "corral")
}
