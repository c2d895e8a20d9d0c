package sqlite_test

import (
	"context"
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
	ctx := context.Background()
	for b.Loop() {
		adm, err := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"})
		if err != nil || adm.Execution.Status != "running" {
			b.Fatal(err, adm.Execution.Status)
		}
		b.StopTimer()
		s.Finish(ctx, adm.Execution.ID, &corral.Outcome{Status: "succeeded"}, nil)
		b.StartTimer()
	}
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
