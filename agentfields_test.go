package corral_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corralrun/corral"
)

// TestAgentFieldsReadAndWriteTheirOwnJSONKey proves each declared field
// is the setting its key names: a value set through it comes back as
// text, and appears in the agent's JSON under that key; a bad value is
// refused with words that name the field.
func TestAgentFieldsReadAndWriteTheirOwnJSONKey(t *testing.T) {
	sample := map[corral.FieldKind]string{corral.FieldText: "x1", corral.FieldInt: "7", corral.FieldDuration: "1m30s", corral.FieldList: "a, b", corral.FieldBool: "true", corral.FieldNumber: "0.5"}
	seen := map[string]bool{}
	for i := range corral.AgentFields() {
		f := &corral.AgentFields()[i]
		if seen[f.Key] || seen["flag:"+f.Flag] {
			t.Fatalf("%s declared twice", f.Key)
		}
		seen[f.Key], seen["flag:"+f.Flag] = true, true
		var a corral.Agent
		if err := f.Set(&a, sample[f.Kind]); err != nil {
			t.Fatalf("%s: %v", f.Key, err)
		}
		if got := f.Text(&a); got != sample[f.Kind] {
			t.Errorf("%s: set %q, reads back %q", f.Key, sample[f.Kind], got)
		}
		if js := f.JSON(&a); string(js) == "null" {
			t.Errorf("%s: the agent's JSON has no such key", f.Key)
		}
		var zero corral.Agent
		if js := f.JSON(&zero); string(js) != "null" && string(js) != `""` && f.Kind != corral.FieldInt {
			t.Errorf("%s: zero value is %s in JSON, want null (the default)", f.Key, js)
		}
		if f.Kind == corral.FieldInt || f.Kind == corral.FieldDuration {
			if err := f.Set(&a, "nonsense"); err == nil || !strings.HasPrefix(err.Error(), f.Key+": ") {
				t.Errorf("%s: bad value: %v", f.Key, err)
			}
		}
	}
	if corral.AgentFieldByKey("max_parallel_tasks") == nil || corral.AgentFieldByKey("nope") != nil {
		t.Fatal("AgentFieldByKey")
	}
}

// TestGraceZeroMeansSigkillAtOnce: as in every command of corral, "0" is
// no grace (kept negative) and empty is the default (zero).
func TestGraceZeroMeansSigkillAtOnce(t *testing.T) {
	g := corral.AgentFieldByKey("grace")
	var a corral.Agent
	for typed, want := range map[string]corral.Duration{"0": -1, "0s": -1, "": 0, "5s": corral.Duration(5e9)} {
		if err := g.Set(&a, typed); err != nil || a.Grace != want {
			t.Fatalf("grace %q: %v, %v; want %v", typed, a.Grace, err, want)
		}
	}
	a.Grace = -1
	if g.Text(&a) != "0" {
		t.Fatalf("no grace reads back as %q", g.Text(&a))
	}
	a.Name, a.Kind = "x", corral.KindShell
	if err := a.Normalize(); err != nil {
		t.Fatalf("an agent without grace: %v", err)
	}
	b, _ := json.Marshal(&a)
	var back corral.Agent
	if err := json.Unmarshal(b, &back); err != nil || back.Grace >= 0 {
		t.Fatalf("no grace lost in JSON: %s %v", b, err)
	}
}
