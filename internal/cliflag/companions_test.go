package cliflag

import (
	"strings"
	"testing"
)

// TestCompanionAnswersItsCommandLine: a companion run with no command, or
// one it does not have, prints a usage naming its commands and exits 2, as
// corral does; help prints it and exits 0; a command it has runs with the
// rest of the arguments.
func TestCompanionAnswersItsCommandLine(t *testing.T) {
	var out strings.Builder
	var got []string
	c := &Companion{Name: "corral-x", About: "corral-x runs x.", Commands: []struct{ Name, Summary string }{{"x", "do x"}}, stderr: &out}
	c.Register("x", func(args []string) int { got = args; return 7 })
	for _, tc := range []struct {
		args []string
		code int
	}{{nil, ExitUsage}, {[]string{"serve"}, ExitUsage}, {[]string{"--addr"}, ExitUsage}, {[]string{"help"}, 0}, {[]string{"-h"}, 0}} {
		out.Reset()
		if code := c.Main(tc.args); code != tc.code {
			t.Errorf("corral-x %q exited %d, want %d", tc.args, code, tc.code)
		}
		if s := out.String(); !strings.Contains(s, "Usage:\n  corral-x COMMAND") || !strings.Contains(s, "do x") {
			t.Errorf("corral-x %q prints no usage naming its commands:\n%s", tc.args, s)
		}
	}
	if code := c.Main([]string{"x", "-v", "a"}); code != 7 || strings.Join(got, " ") != "-v a" {
		t.Errorf("x ran with %q and exited %d", got, code)
	}
	if err := c.Check(); err != nil {
		t.Error(err)
	}
	c.Register("y", func([]string) int { return 0 })
	if err := c.Check(); err == nil {
		t.Error("a command its Commands do not list passes Check")
	}
}
