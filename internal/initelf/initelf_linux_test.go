package initelf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCodeIsItsSourceCompiled: the bytes in code_amd64.go are what testdata/gen.sh makes of testdata/init_amd64.c, so
// that the source a reader checks is the program that runs. Compilers
// differ in what they make of the same source: the check runs where the
// compiler that made the bytes is installed, and is skipped, naming both,
// elsewhere.
func TestCodeIsItsSourceCompiled(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("SKIP: the native init is built for amd64 only")
	}
	for _, tool := range []string{"gcc", "ld", "objcopy", "readelf", "od"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: %s not installed (Debian's gcc and binutils)", tool)
		}
	}
	out, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if have, _, _ := strings.Cut(string(out), "\n"); have != compiler {
		t.Skipf("SKIP: the native init's bytes were made by %q, and %q is installed here: regenerate them with sh testdata/gen.sh to check", compiler, have)
	}
	dir := t.TempDir()
	if out, err := exec.Command("sh", "testdata/gen.sh", "-bin", dir).CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, "init.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(code, want) {
		t.Fatalf("code_amd64.go holds %d bytes that are not testdata/init_amd64.c compiled (%d bytes): run sh testdata/gen.sh", len(code), len(want))
	}
	// The mutants patch the first bytes of kill_tree, confine and
	// gate_answer: they
	// must be their entries.
	for file, have := range map[string]int{"killtree": killTreeAt, "confine": confineAt, "gateanswer": gateAnswerAt} {
		at, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%#x", have); strings.TrimSpace(string(at)) != got {
			t.Fatalf("the bytes say %s starts at %s, the compiler at %s: run sh testdata/gen.sh", file, got, at)
		}
	}
}

// TestImageIsOneReadOnlySegment: the executable loads as code only, with
// its entry at its first byte, and nothing writable but the stack.
func TestImageIsOneReadOnlySegment(t *testing.T) {
	img := Image()
	if runtime.GOARCH != "amd64" {
		if img != nil {
			t.Fatal("an image where there is no native init")
		}
		return
	}
	if len(img) < 64+2*56 || string(img[:4]) != "\x7fELF" {
		t.Fatalf("not an ELF executable: %d bytes", len(img))
	}
	if len(img) > 32<<10 {
		t.Fatalf("%d bytes: the native init grew past 32 KiB", len(img))
	}
	flags := uint32(img[64+4]) | uint32(img[64+5])<<8
	if flags != 4|1 {
		t.Fatalf("the loadable segment's flags are %#x, want PF_R|PF_X", flags)
	}
}
