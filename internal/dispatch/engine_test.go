package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

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
	e, err := New(driver, Options{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return e, db
}

// TestReservedRunsStartAtOnceWithoutAJob proves the local wake: a
// reserved execution runs as soon as it is started, with no job and no
// fetch (the poll is an hour); reservations are bounded by MaxRuns and
// given back when released; a local run that fails is handed to
// Redispatch; Stop waits for the local runs.
func TestReservedRunsStartAtOnceWithoutAJob(t *testing.T) {
	e, db := newEngine(t)
	ctx := context.Background()
	var mu sync.Mutex
	calls := map[string]int{}
	var redispatched []string
	release := make(chan struct{})
	ran := make(chan string, 10)
	err := e.Start(ctx, Config{WorkerID: "w", MaxRuns: 2,
		Run: func(ctx context.Context, id string) error {
			mu.Lock()
			calls[id]++
			mu.Unlock()
			ran <- id
			<-release
			if id == "fails" {
				return errors.New("could not claim")
			}
			return nil
		},
		Redispatch: func(ctx context.Context, id string) error {
			mu.Lock()
			redispatched = append(redispatched, id)
			mu.Unlock()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Reserve("pinned", []string{"gpu"}); r != nil {
		t.Fatal("reserved an execution of a queue this worker does not serve")
	}
	a, b := e.Reserve("ok", nil), e.Reserve("fails", nil)
	if a == nil || b == nil {
		t.Fatal("no room for two runs with MaxRuns 2")
	}
	if e.Reserve("third", nil) != nil {
		t.Fatal("a third reservation past MaxRuns 2")
	}
	Reservations{a, b}.Start()
	got := map[string]bool{}
	for range 2 {
		select {
		case id := <-ran:
			got[id] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("reserved runs did not start within 30s: %v", got)
		}
	}
	close(release)
	testutil.WaitFor(t, 30*time.Second, "room again after the runs", func() bool {
		r := e.Reserve("later", nil)
		if r != nil {
			Reservations{r}.Release()
		}
		return r != nil
	})
	if err := e.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if e.Reserve("after-stop", nil) != nil {
		t.Fatal("reserved after Stop")
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["ok"] != 1 || calls["fails"] != 1 || len(redispatched) != 1 || redispatched[0] != "fails" {
		t.Fatalf("runs %v, redispatched %v", calls, redispatched)
	}
	var jobs int
	if err := db.QueryRow(`SELECT count(*) FROM river_job`).Scan(&jobs); err != nil || jobs != 0 {
		t.Fatalf("%d jobs inserted (%v), want none", jobs, err)
	}
}
