package shell

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/internal/testutil"
)

func TestMain(m *testing.M) {
	leftovers := testutil.IsolateTemp()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	if err := leftovers(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
