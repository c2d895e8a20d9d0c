package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnescapeMountDecodesOctalEscapes(t *testing.T) {
	if got := unescapeMount(`/sys/fs/cgroup/with\040space`); got != "/sys/fs/cgroup/with space" {
		t.Fatalf("got %q", got)
	}
	if got := unescapeMount(`/plain`); got != "/plain" {
		t.Fatalf("got %q", got)
	}
}

func TestSanitizeKeepsLabelsSafeAndShort(t *testing.T) {
	if got := sanitize("exec-01ab/../x y"); got != "exec-01ab____x_y" {
		t.Fatalf("got %q", got)
	}
	long := sanitize(string(make([]byte, 200)))
	if len(long) > 64 {
		t.Fatalf("label of %d bytes", len(long))
	}
}

func TestOpenRefusesCgroupsOutsideCorral(t *testing.T) {
	if _, err := Open("/sys/fs/cgroup/system.slice"); err == nil {
		t.Fatal("opened a cgroup corral does not own")
	}
}

// TestLeafLifecycle creates a leaf, checks it is empty, and removes it; it
// needs a writable cgroup v2 hierarchy (root here).
func TestLeafLifecycle(t *testing.T) {
	root, err := Detect()
	if err != nil {
		t.Skipf("SKIP: no cgroup tier here (run as root, or in a delegated cgroup v2): %v", err)
	}
	leaf, err := root.NewLeaf("unit-test")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(leaf.Path) != root.Dir {
		t.Fatalf("leaf %s not under %s", leaf.Path, root.Dir)
	}
	if pop, err := leaf.Populated(); err != nil || pop {
		t.Fatalf("new leaf populated %v, %v", pop, err)
	}
	if pids, err := leaf.Procs(); err != nil || len(pids) != 0 {
		t.Fatalf("new leaf procs %v, %v", pids, err)
	}
	if err := leaf.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leaf.Path); !os.IsNotExist(err) {
		t.Fatalf("leaf still there: %v", err)
	}
}
