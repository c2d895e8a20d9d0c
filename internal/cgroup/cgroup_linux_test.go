package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

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

func TestLeafNamesAreReadAsTheyAreWritten(t *testing.T) {
	n, ok := parseLeafName("812.4242.7-exec-01ab")
	if !ok || n.pid != 812 || n.start != 4242 || n.label != "exec-01ab" {
		t.Fatalf("got %+v %v", n, ok)
	}
	if n, ok := parseLeafName("812.4242.7"); !ok || n.label != "" {
		t.Fatalf("no label: got %+v %v", n, ok)
	}
	for _, bad := range []string{"probe-12", "812.x.7", "812.4242", "812.4242.x-y"} {
		if _, ok := parseLeafName(bad); ok {
			t.Errorf("%q read as a leaf name", bad)
		}
	}
	if !IsRunLeaf("/corral/812.4242.7-exec-01ab") || !IsRunLeaf("/user.slice/corral/812.4242.7 (deleted)") {
		t.Error("a run's leaf not recognised")
	}
	if IsRunLeaf("/system.slice/812.4242.7") || IsRunLeaf("/corral") || IsRunLeaf("/") {
		t.Error("a cgroup that is no run's leaf recognised as one")
	}
}
