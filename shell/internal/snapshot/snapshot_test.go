package snapshot

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

func TestParseDeclarationsReadsWhatBashWrites(t *testing.T) {
	script := `a=$'x\ny\tz\001w"q$r\\s` + "`" + `t é'; export b="$a"; export c='plain "q" $x \ y'; d=(1 "2 3" $'\n'); declare -A m=([k]=v ["x y"]=z); declare -ix n=5; export e; declare -p a b c d m n e`
	out, err := exec.Command("bash", "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	decls, err := parseDeclarations(string(out))
	if err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	got := map[string]decl{}
	for _, d := range decls {
		got[d.name] = d
	}
	want := "x\ny\tz\001w\"q$r\\s`t é"
	if got["a"].value != want || got["b"].value != want || got["b"].flags != "x" {
		t.Errorf("a=%q b=%+v", got["a"].value, got["b"])
	}
	if got["c"].value != `plain "q" $x \ y` {
		t.Errorf("c=%q", got["c"].value)
	}
	if got["d"].flags != "a" || got["m"].flags != "A" || got["n"].flags != "ix" || got["n"].value != "5" || got["e"].hasValue {
		t.Errorf("decls %+v", decls)
	}
	// Each raw declaration restores its variable.
	var raws []string
	for _, d := range decls {
		raws = append(raws, d.raw)
	}
	out2, err := exec.Command("bash", "-c", strings.Join(raws, "\n")+"\ndeclare -p a b c d m n e").Output()
	if err != nil || string(out2) != string(out) {
		t.Errorf("round trip:\n%s\n%s (%v)", out, out2, err)
	}
}

func TestLoadRefusesAPartialSave(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/c1.env", []byte("/tmp\x00declare -x A=\"1\"\n"), 0o600)
	if _, ok := Load(dir, "c1"); ok {
		t.Error("a file without the end marker loaded")
	}
	os.WriteFile(dir+"/c2.env", []byte("/tmp\x00declare -x A=\"1\"\ndeclare -- B=\"2\"\ndeclare -x SHLVL=\"3\"\n\x00"+complete+"\x00"), 0o600)
	st, ok := Load(dir, "c2")
	if !ok || st.Dir != "/tmp" || !reflect.DeepEqual(st.Env, []string{"A=1"}) {
		t.Fatalf("got %+v %v", st, ok)
	}
	if v, _ := os.ReadFile(dir + "/c2.v"); string(v) != "declare -- B=\"2\"\n" {
		t.Errorf("vars %q", v)
	}
}
