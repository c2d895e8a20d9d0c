package runlog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestALogHoldsNoDescriptorBetweenBatches: a run's log file is open only
// while a batch is written: after its first record (the service's
// "started") and after a batch of output, however long the run goes on,
// this process holds no descriptor of it. A worker holding thousands of
// runs holds none of their logs.
func TestALogHoldsNoDescriptorBetweenBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	w, err := Create(path, "x", NewHub(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write("system", []byte("started"))
	if n := openOf(t, path); n != 0 {
		t.Fatalf("after the first record: %d descriptors of the log open", n)
	}
	w.Write("stdout", []byte("a line"))
	deadline := time.Now().Add(10 * time.Second)
	for len(readAll(t, path)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the batch was not written within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The batch's write and its close are one step under the writer's
	// lock: taking the lock waits for the close.
	w.mu.Lock()
	w.mu.Unlock()
	if n := openOf(t, path); n != 0 {
		t.Fatalf("after a batch of output: %d descriptors of the log open", n)
	}
	w.Write("system", []byte("ended"))
	if got := readAll(t, path); len(got) != 3 || got[2].Text != "ended" {
		t.Fatalf("records %+v", got)
	}
}

// openOf counts this process's descriptors open on path.
func openOf(t *testing.T, path string) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("SKIP: cannot list this process's descriptors: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == path {
			n++
		}
	}
	return n
}
