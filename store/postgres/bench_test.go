package postgres_test

import (
	"context"
	"testing"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/storetest"
)

func benchStore(b *testing.B, slots int) *postgres.Store {
	s, err := postgres.Open(context.Background(), postgres.Options{URL: storetest.PostgresURL(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	a := &corral.Agent{Name: "a", Kind: corral.KindShell, MaxParallelTasks: slots, Overflow: corral.OverflowReject}
	a.Normalize()
	if err := s.CreateAgent(context.Background(), a); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSubmitAdmitted times the heaviest admission: the agent's row
// locked, a slot taken and the run handed to River in one transaction.
// Each run is finished (untimed) so that the agent holds a realistic
// number of slots.
func BenchmarkSubmitAdmitted(b *testing.B) {
	s := benchStore(b, 8)
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
	s := benchStore(b, 8)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		adm, err := s.Submit(ctx, &store.Submission{Agent: "a", Input: "x"})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, _, err := s.Finish(ctx, adm.Execution.ID, &corral.Outcome{Status: "succeeded"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
