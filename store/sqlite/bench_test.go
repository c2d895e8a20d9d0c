package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/sqlite"
)

func benchStore(b *testing.B, slots int, overflow corral.Overflow) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(b.TempDir(), "corral.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	a := &corral.Agent{Name: "a", Kind: corral.KindShell, MaxParallelTasks: slots, Overflow: overflow, MaxBacklog: 1 << 20}
	a.Normalize()
	if err := s.CreateAgent(context.Background(), a); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSubmitAdmitted times the heaviest admission: a slot taken and
// the run handed to River in the same transaction. Each run is finished
// (untimed) so that the agent holds a realistic number of slots.
func BenchmarkSubmitAdmitted(b *testing.B) {
	s := benchStore(b, 8, corral.OverflowReject)
	for b.Loop() {
		admitAndFinish(b, s)
	}
}

// admitAndFinish times one admission that takes a slot, and finishes
// the run untimed, so that the agent holds as many slots as before.
func admitAndFinish(b *testing.B, s *sqlite.Store) {
	ctx := context.Background()
	adm, err := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"})
	if err != nil || adm.Execution.Status != "running" {
		b.Fatal(err, adm.Execution.Status)
	}
	b.StopTimer()
	s.Finish(ctx, adm.Execution.ID, &corral.Outcome{Status: "succeeded"}, nil)
	b.StartTimer()
}

// BenchmarkFinish times a terminal state with its slot release (the
// submission is untimed).
func BenchmarkFinish(b *testing.B) {
	s := benchStore(b, 8, corral.OverflowReject)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		adm, _ := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"})
		b.StartTimer()
		if _, applied, err := s.Finish(ctx, adm.Execution.ID, &corral.Outcome{Status: "succeeded"}, nil); err != nil || !applied {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmitQueued times a decision that queues (behind a backlog
// that grows to b.N).
func BenchmarkSubmitQueued(b *testing.B) {
	s := benchStore(b, 1, corral.OverflowQueue)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareInsert is the peer: the cheapest durable write on the same
// kind of database.
func BenchmarkBareInsert(b *testing.B) {
	s := benchStore(b, 1, corral.OverflowReject)
	db := s.DB()
	if _, err := db.Exec(`CREATE TABLE peer (id INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := db.Exec(`INSERT INTO peer (v) VALUES ('x')`); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmitBesideHeld times an admission while the agent holds
// many slots: 1 to held without a gap (the next slot is the one after
// the highest), or with one gap half way up (the lowest free slot is
// found by a walk up to it). Each run is finished (untimed), so the
// slots held stay the same.
func BenchmarkSubmitBesideHeld(b *testing.B) {
	for _, held := range []int{100, 1000, 5000} {
		for _, gap := range []bool{false, true} {
			name := fmt.Sprintf("held=%d/contiguous", held)
			if gap {
				name = fmt.Sprintf("held=%d/gap-half-way", held)
			}
			b.Run(name, func(b *testing.B) {
				s := benchStore(b, 10000, corral.OverflowReject)
				ctx := context.Background()
				var ids []string
				for range held + 1 {
					adm, err := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, adm.Execution.ID)
				}
				release := ids[held] // the last: slots 1 to held stay
				if gap {
					release = ids[held/2]
				}
				s.Finish(ctx, release, &corral.Outcome{Status: "succeeded"}, nil)
				for b.Loop() {
					admitAndFinish(b, s)
				}
			})
		}
	}
}
