package runlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFollowerWakesOnEveryAppendAndSeesAll(t *testing.T) {
	hub := NewHub()
	path := filepath.Join(t.TempDir(), "x.log")
	r := NewReader(path)
	if recs, err := r.Next(); err != nil || len(recs) != 0 {
		t.Fatalf("missing log: %v %v", recs, err)
	}
	w, err := Create(path, "x", hub, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for got < 100 {
			ch := hub.Changed("x")
			recs, err := r.Next()
			if err != nil {
				t.Error(err)
				return
			}
			for _, raw := range recs {
				var rec Record
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Error(err)
				}
				got++
				if rec.Seq != got {
					t.Errorf("seq %d, want %d", rec.Seq, got)
				}
			}
			if got < 100 {
				select {
				case <-ch:
				case <-time.After(5 * time.Second):
					t.Error("follower not woken")
					return
				}
			}
		}
	}()
	for i := range 100 {
		w.Write("stdout", []byte{'a' + byte(i%26)})
	}
	w.Close()
	<-done
}

func TestWriterBoundsTheFileAndSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	w, _ := Create(path, "x", nil, 1000)
	for range 1000 {
		w.Write("stdout", []byte("0123456789"))
	}
	w.Close()
	recs, _ := NewReader(path).Next()
	var last Record
	json.Unmarshal(recs[len(recs)-1], &last)
	if last.Stream != "system" || len(recs) > 30 {
		t.Fatalf("%d records, last %+v", len(recs), last)
	}
	out, _ := Tail(path, 25)
	if len(out) > 25 {
		t.Fatalf("tail too long: %d", len(out))
	}
}

func readAll(t *testing.T, path string) []Record {
	t.Helper()
	r := NewReader(path)
	var out []Record
	for {
		recs, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return out
		}
		size := 0
		for _, raw := range recs {
			size += len(raw)
			var rec Record
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatalf("record %q: %v", raw, err)
			}
			out = append(out, rec)
		}
		if size > ReadChunk+maxRecord {
			t.Fatalf("one Next returned %d bytes", size)
		}
	}
}

func TestReaderReplaysALargeLogWholeInSmallChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	w, _ := Create(path, "x", nil, 0)
	line := bytes.Repeat([]byte("x"), 1000)
	const n = 20000 // 20 MB, past any single read
	for range n {
		w.Write("stdout", line)
	}
	w.Write("system", []byte("ended: succeeded"))
	w.Close()
	recs := readAll(t, path)
	if len(recs) != n+1 || recs[n].Text != "ended: succeeded" {
		t.Fatalf("replayed %d records, last %+v; want %d ending with the end", len(recs), recs[len(recs)-1], n+1)
	}
	for i, rec := range recs {
		if rec.Seq != i+1 {
			t.Fatalf("record %d has seq %d", i+1, rec.Seq)
		}
	}
	// A record longer than a chunk (escaping grows it) comes whole.
	long := bytes.Repeat([]byte{1}, 64<<10)
	path2 := filepath.Join(t.TempDir(), "y.log")
	w2, _ := Create(path2, "y", nil, 0)
	w2.Write("stdout", long)
	w2.Close()
	if recs := readAll(t, path2); len(recs) != 1 || len(recs[0].Text) != len(long) {
		t.Fatalf("long record: %d records", len(recs))
	}
}

func TestSystemRecordsPassTheSizeBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	w, _ := Create(path, "x", nil, 1000)
	for range 1000 {
		w.Write("stdout", []byte("0123456789"))
	}
	w.Write("system", []byte("ended: succeeded"))
	w.Close()
	recs := readAll(t, path)
	if recs[len(recs)-2].Text != "ended: succeeded" || !strings.Contains(recs[len(recs)-1].Text, "records dropped") {
		t.Fatalf("last records: %+v", recs[len(recs)-2:])
	}
	if !strings.Contains(w.Note(), "dropped") {
		t.Fatalf("note: %q", w.Note())
	}
}

// TestWriterSurvivesAFullDiskAndSaysWhatItLost writes through /dev/full
// (every write fails with ENOSPC), then through the file again: nothing
// half written, the gap numbered and explained, writing resumed.
func TestWriterSurvivesAFullDiskAndSaysWhatItLost(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("SKIP: needs /dev/full")
	}
	path := filepath.Join(t.TempDir(), "x.log")
	w, _ := Create(path, "x", nil, 0)
	put := func(text string) { // one record, one batch
		w.Write("stdout", []byte(text))
		w.mu.Lock()
		w.flush()
		w.mu.Unlock()
	}
	full.Close()
	put("before")
	// The file each batch opens is the full device for the next five.
	w.path = "/dev/full"
	for range 5 {
		put("lost")
	}
	w.path = path
	put("after")
	w.Close()
	recs := readAll(t, path)
	if len(recs) != 3 {
		t.Fatalf("records %+v", recs)
	}
	if recs[0].Text != "before" || recs[0].Seq != 1 || recs[2].Text != "after" || recs[2].Seq != 7 {
		t.Fatalf("records around the gap: %+v", recs)
	}
	if n := recs[1]; n.Stream != "system" || n.Seq != 6 || !strings.Contains(n.Text, "5 records") || !strings.Contains(n.Text, "2 to 6") || !strings.Contains(n.Text, "no space left") {
		t.Fatalf("note: %+v", n)
	}
	if !strings.Contains(w.Note(), "5 records could not be written") {
		t.Fatalf("execution note: %q", w.Note())
	}
}
