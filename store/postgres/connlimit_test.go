package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/corralrun/corral/store/postgres"
	"github.com/corralrun/corral/store/storetest"
)

// appConns counts the server's connections named app.
func appConns(t *testing.T, admin *pgx.Conn, app string) int {
	t.Helper()
	var n int
	if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func appName(t *testing.T) string {
	var b [4]byte
	rand.Read(b[:])
	return "corral/test-" + hex.EncodeToString(b[:])
}

// TestStoreNeverOpensMoreThanMaxConns takes connections out of the pool
// as River's listener does (Hijack), which the pool then no longer
// counts: the store still never has more than MaxConns open, and a
// connection beyond them waits for one to close rather than failing
// (as one does when the pool replaces a connection it is still closing).
func TestStoreNeverOpensMoreThanMaxConns(t *testing.T) {
	u := storetest.PostgresURL(t)
	ctx := context.Background()
	app := appName(t)
	s, err := postgres.Open(ctx, postgres.Options{URL: u, MaxConns: 4, ApplicationName: app})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var out []*pgx.Conn
	defer func() {
		for _, c := range out {
			c.Close(ctx)
		}
	}()
	for len(out) < 4 {
		c, err := s.Pool().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Hijack())
	}
	// A fifth waits: it has not got a connection while four are open,
	// and gets one once one of them closes.
	got := make(chan error, 1)
	go func() {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		c, err := s.Pool().Acquire(actx)
		if err == nil {
			c.Release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a fifth connection beside four taken out of the pool: %v; %d open as %s", err, appConns(t, admin, app), app)
	case <-time.After(500 * time.Millisecond):
	}
	if n := appConns(t, admin, app); n != 4 {
		t.Fatalf("%d connections open as %s, want the 4 of the bound", n, app)
	}
	out[0].Close(ctx)
	out = out[1:]
	if err := <-got; err != nil {
		t.Fatalf("no connection once one of the four closed: %v", err)
	}
	if st := s.Conns(); st.Peak != 4 || st.Max != 4 || st.Open != 4 {
		t.Fatalf("connection counts %+v, want 4 open, peak 4, bound 4", st)
	}
}

// TestOpenRefusesWhatTheServerCannotTake: a bound above what the server
// (max_connections) or the database (CONNECTION LIMIT) accepts is an
// error at Open that names the limit, not "too many clients" under load.
func TestOpenRefusesWhatTheServerCannotTake(t *testing.T) {
	u := storetest.PostgresURL(t)
	ctx := context.Background()
	_, err := postgres.Open(ctx, postgres.Options{URL: u, MaxConns: 100000})
	if err == nil || !strings.Contains(err.Error(), "max_connections") {
		t.Fatalf("a bound of 100000 connections: %v, want an error naming max_connections", err)
	}
	t.Log(err)
	admin, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	db := strings.TrimPrefix(admin.Config().Database, "/")
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{db}.Sanitize()+" CONNECTION LIMIT 6"); err != nil {
		t.Fatal(err)
	}
	// A refused Open has closed its connection, but the server counts it
	// until its backend has exited, which it does on its own time.
	onlyAdmin := func() {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var n int
			if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", db).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n <= 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d connections to %s 10 s after a refused Open, want the admin's alone", n, db)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The admin connection is one of the database's six.
	onlyAdmin()
	_, err = postgres.Open(ctx, postgres.Options{URL: u, MaxConns: 6})
	if err == nil || !strings.Contains(err.Error(), "CONNECTION LIMIT 6") {
		t.Fatalf("6 connections to a database that takes 5 more: %v, want an error naming its limit", err)
	}
	t.Log(err)
	onlyAdmin()
	s, err := postgres.Open(ctx, postgres.Options{URL: u, MaxConns: 5})
	if err != nil {
		t.Fatalf("5 connections to a database that takes 5 more: %v", err)
	}
	s.Close()
	if _, err := postgres.Open(ctx, postgres.Options{URL: u, MaxConns: postgres.MinConns - 1}); err == nil {
		t.Fatalf("a bound of %d connections accepted", postgres.MinConns-1)
	}
}
