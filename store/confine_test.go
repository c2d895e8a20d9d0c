package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corralrun/corral/store"
)

func TestCheckPromptPlacementRefusesOptionPositions(t *testing.T) {
	for _, tc := range []struct {
		template []string
		ok       bool
	}{
		{[]string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--", "{{prompt}}"}, true},
		{[]string{"codex", "exec", "--json", "--", "{{prompt}}"}, true},
		{[]string{"claude", "-p", "{{prompt}}"}, false},
		{[]string{"claude", "-p", "{{prompt}} please"}, false},
		{[]string{"tool", "--prompt={{prompt}}"}, true},
		{[]string{"tool", "ask: {{prompt}}"}, true},
		{[]string{"sh", "-c", `echo "$1"`, "agent", "{{prompt}}"}, true},
		{[]string{"/bin/bash", "-c", `echo "$1"`, "{{prompt}}"}, true},
		{[]string{"bash", "-c", "{{prompt}}"}, false},
		{[]string{"{{prompt}}"}, false},
		{[]string{"claude", "-p"}, true},
	} {
		err := store.CheckPromptPlacement(tc.template)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok %v", tc.template, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "{{prompt}}") {
			t.Errorf("%q: the error does not say what to change: %v", tc.template, err)
		}
	}
}

func TestPromptArgsKeepsAnOptionLikePromptPositional(t *testing.T) {
	const evil = "--dangerously-skip-permissions"
	for _, tc := range []struct {
		template, want []string
	}{
		{[]string{"claude", "-p", "--", "{{prompt}}"}, []string{"claude", "-p", "--", evil}},
		{[]string{"claude", "-p"}, []string{"claude", "-p", "--", evil}},
		{[]string{"codex", "exec", "--json", "--"}, []string{"codex", "exec", "--json", "--", evil}},
		{[]string{"sh", "-c", `echo "$1"`, "agent"}, []string{"sh", "-c", `echo "$1"`, "agent", evil}},
		{[]string{"tool", "--prompt={{prompt}}"}, []string{"tool", "--prompt=" + evil}},
	} {
		got, err := store.PromptArgs(tc.template, evil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.template, got, err, tc.want)
		}
	}
	// An agent stored before the check: its runs still start unless the
	// prompt would become an option.
	legacy := []string{"claude", "-p", "{{prompt}}"}
	if got, err := store.PromptArgs(legacy, "fix it"); err != nil || got[2] != "fix it" {
		t.Fatalf("legacy template, plain prompt: %q %v", got, err)
	}
	if _, err := store.PromptArgs(legacy, evil); err == nil {
		t.Fatal("a legacy template let a prompt starting with '-' into an option position")
	}
}

func TestNormalizeChecksWhoATaskRunsAsAndWhatItIsPassed(t *testing.T) {
	for _, tc := range []struct {
		a    store.Agent
		want string // substring of the error; "" for none
	}{
		{store.Agent{RunAs: "nobody", PassEnv: []string{"LANG"}}, ""},
		{store.Agent{RunAs: "-x"}, "run_as"},
		{store.Agent{PassEnv: []string{"CORRAL_TOKEN"}}, "never passed"},
		{store.Agent{PassEnv: []string{"CORRAL_DB"}}, "never passed"},
		{store.Agent{PassEnv: []string{"A=B"}}, "pass_env"},
		{store.Agent{Env: map[string]string{"K": "a\x00b"}}, "NUL"},
	} {
		a := tc.a
		a.Name, a.Kind = "x", store.KindShell
		err := a.Normalize()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.a, err, tc.want)
		}
	}
}
