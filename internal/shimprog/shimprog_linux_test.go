package shimprog

import (
	"debug/buildinfo"
	"os/exec"
	"path/filepath"
	"testing"
)

// The companion is taken only when its build information says it was
// built from the same source with the same settings: two builds of the
// same tree match, a build with other tags (another program, as far as a
// mutant or a feature is concerned) does not.
func TestSameBuildTellsBuildsApart(t *testing.T) {
	dir := t.TempDir()
	build := func(name string, args ...string) string {
		bin := filepath.Join(dir, name)
		cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, args...), "github.com/corralrun/corral/cmd/corral-shim")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if info.Main.Path != module {
			t.Fatalf("main module %q, want %q", info.Main.Path, module)
		}
		return bin
	}
	a, b, tagged := build("a"), build("b"), build("tagged", "-tags", "shimprogtest")
	read := func(bin string) *buildinfo.BuildInfo {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	for _, bin := range []string{a, tagged} {
		mine, err := readBuildInfo(bin)
		if err != nil || mine.String() != read(bin).String() {
			t.Fatalf("readBuildInfo(%s) = %v, %v; debug/buildinfo reads\n%v", bin, mine, err, read(bin))
		}
	}
	if !sameBuild(read(a), read(b)) {
		t.Errorf("two builds of the same tree with the same settings do not match")
	}
	if sameBuild(read(a), read(tagged)) {
		t.Errorf("a build with other tags matches")
	}
}

// A program that is not corral's command (a test binary here, or any
// program embedding proc) starts its shims from itself, whatever sits
// beside it.
func TestOtherProgramsUseThemselves(t *testing.T) {
	if got := Path(); got != Self {
		t.Fatalf("Path() = %q in a test binary, want %q", got, Self)
	}
}
