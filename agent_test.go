package corral_test

import (
	"strings"
	"testing"

	"github.com/corralrun/corral"
)

func TestNormalizeChecksWhoATaskRunsAsAndWhatItIsPassed(t *testing.T) {
	for _, tc := range []struct {
		a    corral.Agent
		want string // substring of the error; "" for none
	}{
		{corral.Agent{RunAs: "nobody", PassEnv: []string{"LANG"}}, ""},
		{corral.Agent{RunAs: "-x"}, "run_as"},
		{corral.Agent{PassEnv: []string{"A=B"}}, "pass_env"},
		{corral.Agent{Env: map[string]string{"K": "a\x00b"}}, "NUL"},
	} {
		a := tc.a
		a.Name, a.Kind = "x", corral.KindShell
		err := a.Normalize()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.a, err, tc.want)
		}
	}
}
