package executor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/corralrun/corral"
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
		err := CheckPromptPlacement(tc.template)
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
		got, err := PromptArgs(tc.template, evil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, %v; want %q", tc.template, got, err, tc.want)
		}
	}
	// An agent stored before the check: its runs still start unless the
	// prompt would become an option.
	legacy := []string{"claude", "-p", "{{prompt}}"}
	if got, err := PromptArgs(legacy, "fix it"); err != nil || got[2] != "fix it" {
		t.Fatalf("legacy template, plain prompt: %q %v", got, err)
	}
	if _, err := PromptArgs(legacy, evil); err == nil {
		t.Fatal("a legacy template let a prompt starting with '-' into an option position")
	}
}

func TestCheckAgentRefusesToPassTheServicesSecrets(t *testing.T) {
	for _, name := range ServiceSecrets {
		a := &corral.Agent{Name: "x", Kind: corral.KindShell, PassEnv: []string{"LANG", name}}
		if err := a.Normalize(); err != nil {
			t.Fatal(err)
		}
		if err := CheckAgent(a); err == nil || !strings.Contains(err.Error(), "never passed") {
			t.Errorf("pass_env %s: err %v, want it refused", name, err)
		}
	}
	a := &corral.Agent{Name: "x", Kind: corral.KindHeadless, Command: []string{"claude", "-p", "{{prompt}}"}}
	if err := a.Normalize(); err != nil {
		t.Fatal(err)
	}
	if err := CheckAgent(a); err == nil {
		t.Error("a headless command with its prompt where options are parsed passed")
	}
}
