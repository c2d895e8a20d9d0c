package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openLimited(t *testing.T, l store.Limits) store.Store {
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "corral.db"), Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Dispatcher().Stop(context.Background()); s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openLimited(t, store.Limits{}) })
}

func TestLimits(t *testing.T) { storetest.RunLimits(t, openLimited) }

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "corral.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	a := &corral.Agent{Name: "keep", Kind: corral.KindShell}
	a.Normalize()
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	adm, err := s.Submit(ctx, &store.Submission{Agent: "keep", Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetExecution(ctx, adm.Execution.ID); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	if _, err := sqlite.Open(context.Background(), sqlite.Options{}); err == nil {
		t.Fatal("empty path accepted")
	}
}

func TestWorkersSharingTheFileNeverOverbook(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) []store.Store {
		path := filepath.Join(t.TempDir(), "corral.db")
		var out []store.Store
		for range 3 {
			s, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Dispatcher().Stop(context.Background()); s.Close() })
			out = append(out, s)
		}
		return out
	})
}

// TestColumnsKeepTheirOnDiskTypes pins the file format that databases
// written by earlier versions have: times are INTEGER microseconds since
// the epoch and documents TEXT, whatever the shared rules pass.
func TestColumnsKeepTheirOnDiskTypes(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "corral.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := &corral.Agent{Name: "disk", Kind: corral.KindShell}
	a.Normalize()
	if err := s.CreateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	adm, err := s.Submit(ctx, &store.Submission{Agent: "disk", Input: "x"})
	if err != nil {
		t.Fatal(err)
	}
	hb := time.Date(2030, 1, 2, 3, 4, 5, 6007000, time.UTC)
	if err := s.RegisterWorker(ctx, &store.Worker{ID: "w", Heartbeat: hb}); err != nil {
		t.Fatal(err)
	}
	e := adm.Execution
	for _, c := range []struct {
		query string
		want  string
	}{
		{`SELECT typeof(created_at) || ' ' || created_at FROM corral_executions`, fmt.Sprint("integer ", e.CreatedAt.UnixMicro())},
		{`SELECT typeof(admitted_at) || ' ' || admitted_at FROM corral_executions`, fmt.Sprint("integer ", e.AdmittedAt.UnixMicro())},
		{`SELECT typeof(acquired_at) || ' ' || acquired_at FROM corral_slots`, fmt.Sprint("integer ", e.AdmittedAt.UnixMicro())},
		{`SELECT typeof(heartbeat_at) || ' ' || heartbeat_at FROM corral_workers`, fmt.Sprint("integer ", hb.UnixMicro())},
		{`SELECT typeof(cancel_requested) || ' ' || cancel_requested FROM corral_executions`, "integer 0"},
		{`SELECT typeof(doc) FROM corral_executions`, "text"},
		{`SELECT typeof(doc) FROM corral_agents`, "text"},
		{`SELECT typeof(doc) FROM corral_workers`, "text"},
	} {
		var got string
		if err := s.DB().QueryRowContext(ctx, c.query).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.query, got, err, c.want)
		}
	}
}
