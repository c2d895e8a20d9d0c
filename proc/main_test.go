package proc_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// afterTests are verdicts on the package's tests as a whole, given when
// they have passed: each says what failed, or nothing.
var afterTests []func() string

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(verdicts{m})
}

// verdicts runs the tests, then the verdicts of afterTests.
type verdicts struct{ m *testing.M }

func (v verdicts) Run() int {
	code := v.m.Run()
	if code != 0 {
		return code
	}
	for _, verdict := range afterTests {
		if e := verdict(); e != "" {
			fmt.Fprintln(os.Stderr, "FAIL:", e)
			code = 1
		}
	}
	return code
}
