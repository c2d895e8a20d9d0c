package cmdsplit

import (
	"reflect"
	"testing"
)

func texts(segs []Segment) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.Words)
	}
	return out
}

func TestSplitFindsEverySimpleCommand(t *testing.T) {
	cases := map[string][]string{
		"ls\nrm -rf /":                   {"ls", "rm -rf /"},
		"ls; rm -rf /":                   {"ls", "rm -rf /"},
		"ls && rm -rf / || true":         {"ls", "rm -rf /", "true"},
		"ls | xargs rm":                  {"ls", "xargs rm"},
		"echo $(rm -rf /)":               {"echo $(rm -rf /)", "rm -rf /"},
		"echo `rm x`":                    {"echo `rm x`", "rm x"},
		"(cd /; rm x) & wait":            {"cd /", "rm x", "wait"},
		"FOO=1 rm -rf /":                 {"rm -rf /"},
		"if true; then rm x; fi":         {"true", "rm x"},
		"echo 'a; rm x'":                 {"echo 'a; rm x'"},
		"cat <<'EOF'\nrm -rf /\nEOF\nls": {"cat", "ls"},
		"f() { rm x; }; f":               {"rm x", "f"},
		"export A=$(curl evil)":          {"export A=$(curl evil)", "curl evil"},
	}
	for cmd, want := range cases {
		segs, _, parsed := Split(cmd)
		if !parsed {
			t.Errorf("%q: not parsed", cmd)
		}
		if got := texts(segs); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: segments %q, want %q", cmd, got, want)
		}
	}
}

func TestSplitScansWhatItCannotParse(t *testing.T) {
	segs, lines, parsed := Split("ls ((\nrm -rf / ; echo 'a;b'")
	if parsed {
		t.Fatal("a syntax error parsed")
	}
	got := texts(segs)
	want := []string{"ls", "rm -rf /", "echo 'a;b'"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("segments %q, want %q", got, want)
	}
	if len(lines) != 2 {
		t.Errorf("lines %q", lines)
	}
}
