package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/sqlite"
	"github.com/corralrun/corral/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "corral.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.StopEngine(context.Background()); s.Close() })
		return s
	})
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "corral.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	a := &store.Agent{Name: "keep", Kind: store.KindShell}
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
			t.Cleanup(func() { s.StopEngine(context.Background()); s.Close() })
			out = append(out, s)
		}
		return out
	})
}
