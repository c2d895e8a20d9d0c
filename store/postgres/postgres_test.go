package postgres_test

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t *testing.T, url string) *postgres.Store { return openLimited(t, url, store.Limits{}) }

func openLimited(t *testing.T, url string, l store.Limits) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), postgres.Options{URL: url, MaxConns: 8, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Dispatcher().Stop(context.Background()); s.Close() })
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, storetest.PostgresURL(t)) })
}

func TestLimits(t *testing.T) {
	storetest.RunLimits(t, func(t *testing.T, l store.Limits) store.Store { return openLimited(t, storetest.PostgresURL(t), l) })
}

// TestWorkersSharingTheDatabaseNeverOverbook runs the admission checks
// with three stores on one database, as three workers would.
func TestWorkersSharingTheDatabaseNeverOverbook(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) []store.Store {
		u := storetest.PostgresURL(t)
		return []store.Store{open(t, u), open(t, u), open(t, u)}
	})
}

// TestConcurrentStartsMigrateOnce opens five stores on a fresh database
// at once: the advisory lock lets one apply the migrations while the
// others wait, and every one opens.
func TestConcurrentStartsMigrateOnce(t *testing.T) {
	u := storetest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), postgres.Options{URL: u, MaxConns: postgres.MinConns})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := open(t, u)
	var n, distinct int
	if err := s.Pool().QueryRow(context.Background(), `SELECT count(*), count(DISTINCT version) FROM corral_schema_version`).Scan(&n, &distinct); err != nil || n != distinct {
		t.Fatalf("%d schema steps recorded for %d versions (%v): a step was applied twice", n, distinct, err)
	}
}

func TestOpenExplainsABadURL(t *testing.T) {
	if _, err := postgres.Open(context.Background(), postgres.Options{}); err == nil {
		t.Fatal("empty URL accepted")
	}
	_, err := postgres.Open(context.Background(), postgres.Options{URL: "postgres://nobody@127.0.0.1:1/none?connect_timeout=2"})
	if err == nil {
		t.Fatal("unreachable server accepted")
	}
	t.Log(err)
}
