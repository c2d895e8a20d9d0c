package mcpserver

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// corralBin is the corral binary built for these tests.
var corralBin string

func TestMain(m *testing.M) {
	leftovers := testutil.IsolateTemp()
	dir, err := os.MkdirTemp("", "corral-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if corralBin, err = servetest.BuildCorral(dir); err != nil {
		fmt.Fprintln(os.Stderr, "building corral:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	if err := leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
