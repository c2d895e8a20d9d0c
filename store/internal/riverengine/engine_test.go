package riverengine

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"go.uber.org/goleak"
	_ "modernc.org/sqlite"

	"github.com/corralrun/corral/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine opens a fresh SQLite database with River's tables and an
// engine on it.
func newEngine(t *testing.T) (*Engine[*sql.Tx], *sql.DB) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "e.db")+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	driver := riversqlite.New(db)
	mig, err := rivermigrate.New(driver, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mig.Migrate(context.Background(), rivermigrate.DirectionUp, nil); err != nil {
		t.Fatal(err)
	}
	e, err := New(driver, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, db
}

// TestRunLocalRunsAtOnceAndItsJobDoesNotRunItAgain proves the local wake:
// a dispatch handed to RunLocal runs without any fetch (the poll is an
// hour), and its River job, once fetched, ends without a second run;
// a local run that failed is run again by its job.
func TestRunLocalRunsAtOnceAndItsJobDoesNotRunItAgain(t *testing.T) {
	e, db := newEngine(t)
	ctx := context.Background()
	var mu sync.Mutex
	calls := map[string]int{}
	ran := make(chan string, 10)
	err := e.Start(ctx, Config{WorkerID: "w", MaxRuns: 4, PollInterval: time.Hour, Run: func(ctx context.Context, id string) error {
		mu.Lock()
		calls[id]++
		n := calls[id]
		mu.Unlock()
		ran <- id
		if id == "fails" && n == 1 {
			return errors.New("could not claim")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Stop(ctx)

	e.RunLocal([]Dispatch{{ID: "ok"}, {ID: "fails"}, {ID: "pinned", Labels: []string{"gpu"}}})
	got := map[string]bool{}
	for range 2 {
		select {
		case id := <-ran:
			got[id] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("local runs did not start within 30s: %v", got)
		}
	}
	if !got["ok"] || !got["fails"] {
		t.Fatalf("ran %v locally, want ok and fails (pinned is not served here)", got)
	}
	// Their jobs, as a committed promotion leaves them; the poll is an
	// hour, so insert them the way that wakes the fetch.
	for _, id := range []string{"ok", "fails"} {
		if _, err := e.worker.Insert(ctx, RunArgs{ExecutionID: id}, &river.InsertOpts{Queue: Queue}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case id := <-ran:
		if id != "fails" {
			t.Fatalf("the job of %s ran it again", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the job of the failed local run did not run it within 30s")
	}
	testutil.WaitFor(t, 30*time.Second, "both jobs completed", func() bool {
		return completed(t, db) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	if calls["ok"] != 1 || calls["fails"] != 2 || calls["pinned"] != 0 {
		t.Fatalf("runs: %v", calls)
	}
}

func completed(t *testing.T, db *sql.DB) int {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM river_job WHERE state = 'completed'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
