package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/store"
	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/sqlite"
)

// PostgresEnv names the environment variable holding the URL of a
// PostgreSQL server for tests (a pgx URL whose user may create
// databases). Tests that need PostgreSQL skip without it.
const PostgresEnv = "CORRAL_TEST_POSTGRES"

// Backend makes fresh databases of one driver for tests.
type Backend struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Fresh makes a new, empty database that lives until the test ends.
	// It returns its URL (a PostgreSQL URL, or "" for SQLite, whose
	// database is the file corral.db in dir) and a function that opens
	// a handle on it, closed at the end of the test; call it once per
	// worker.
	Fresh func(t testing.TB, dir string) (dbURL string, open func() store.Store)
}

// Backends returns SQLite and PostgreSQL. Without PostgresEnv, Fresh of
// PostgreSQL skips its test, saying so: a run of the suite shows what it
// did not test.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", Fresh: freshSQLite}, {Name: "postgres", Fresh: freshPostgres}}
}

func freshSQLite(t testing.TB, dir string) (string, func() store.Store) {
	path := filepath.Join(dir, "corral.db")
	return "", func() store.Store {
		s, err := sqlite.Open(context.Background(), sqlite.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Dispatcher().Stop(context.Background()); s.Close() })
		return s
	}
}

func freshPostgres(t testing.TB, _ string) (string, func() store.Store) {
	u := PostgresURL(t)
	return u, func() store.Store {
		s, err := postgres.Open(context.Background(), postgres.Options{URL: u, MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Dispatcher().Stop(context.Background()); s.Close() })
		return s
	}
}

// PostgresURL creates an empty database on the server of PostgresEnv and
// returns its URL; the database is dropped when the test ends. The test
// is skipped when PostgresEnv is not set.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("SKIP: PostgreSQL tests need %s=postgres://… (a server where the user may create databases); .ci/run starts one", PostgresEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresEnv, err)
	}
	defer admin.Close(context.Background())
	var b [6]byte
	rand.Read(b[:])
	name := "corral_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	pu, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	pu.Path = "/" + name
	return pu.String()
}

// startDispatcher starts s's dispatcher with cfg, as the service does:
// the queues of the agents' label sets, redispatch through s.
func startDispatcher(ctx context.Context, s store.Store, cfg store.DispatchConfig) error {
	cfg.LabelSets = func(ctx context.Context) ([][]string, error) { return store.LabelSets(ctx, s) }
	cfg.Redispatch = s.Redispatch
	return s.Dispatcher().Start(ctx, cfg)
}
