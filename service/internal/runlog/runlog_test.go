package runlog

import (
	"encoding/json"
	"path/filepath"
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
