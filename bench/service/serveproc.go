package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/store/postgres"
)

// buildCorral builds this module's corral, with its companions beside it
// (corral serve runs corral-serve), into a temporary directory.
func buildCorral() (string, func()) {
	dir := benchutil.TempDir("", "corral-fleet-bin-")
	return benchutil.BuildCorral(dir), func() { os.RemoveAll(dir) }
}

// serveWorker is one corral serve process of a benchmark.
type serveWorker struct {
	id, addr, data string
	cmd            *exec.Cmd
	listening      string // the address it printed, under mu
	c              *client.Client
	exited         chan struct{}
	mu             sync.Mutex
	log            strings.Builder
}

// serveFleet is n corral serve processes on one database, on loopback
// ports of their own, without a token (loopback only).
type serveFleet struct {
	workers    []*serveWorker
	maxRuns    int
	dbMaxConns int
}

// startFleet starts n workers of bin on db (each its own embedded SQLite
// store when db is empty; with GOMAXPROCS set when gomaxprocs is, and
// --task-guard guard), at once (the first to take
// the migration lock creates the schema), and waits until each listens.
func startFleet(ctx context.Context, bin, db string, n, maxRuns, dbMaxConns, gomaxprocs int, guard string) *serveFleet {
	fl := &serveFleet{maxRuns: maxRuns, dbMaxConns: dbMaxConns}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CORRAL_") {
			env = append(env, kv)
		}
	}
	if gomaxprocs > 0 {
		env = append(env, fmt.Sprint("GOMAXPROCS=", gomaxprocs))
	}
	for i := range n {
		dir := benchutil.TempDir("", "corral-fleet-worker-")
		w := &serveWorker{id: fmt.Sprintf("bench-w%d", i), data: dir, exited: make(chan struct{})}
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir, "--worker-id", w.id,
			"--max-runs", fmt.Sprint(maxRuns), "--insecure-no-auth", "--shutdown-timeout", "5s", "--task-guard", guard}
		if db != "" {
			args = append(args, "--db", db)
		}
		if dbMaxConns > 0 {
			args = append(args, "--db-max-conns", fmt.Sprint(dbMaxConns))
		}
		w.cmd = exec.Command(bin, args...)
		w.cmd.Env = env
		dieWithBench(w.cmd)
		fl.workers = append(fl.workers, w)
		w.start()
	}
	for _, w := range fl.workers {
		w.waitListening(ctx)
		w.c = client.New(w.addr, "")
	}
	return fl
}

func (w *serveWorker) start() {
	pipe, err := w.cmd.StderrPipe()
	benchutil.Check(err)
	benchutil.Check(w.cmd.Start())
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			w.mu.Lock()
			w.log.WriteString(line + "\n")
			if rest, ok := strings.CutPrefix(line, "corral serve: listening on http://"); ok && w.listening == "" {
				w.listening = strings.Fields(rest)[0]
			}
			w.mu.Unlock()
		}
		w.cmd.Wait()
		close(w.exited)
	}()
}

func (w *serveWorker) waitListening(ctx context.Context) {
	for {
		w.mu.Lock()
		addr, log := w.listening, w.log.String()
		w.mu.Unlock()
		if addr != "" {
			w.addr = addr
			return
		}
		select {
		case <-w.exited:
			benchutil.Check(fmt.Errorf("worker %s exited before listening:\n%s", w.id, log))
		case <-ctx.Done():
			benchutil.Check(fmt.Errorf("worker %s did not listen: %w\n%s", w.id, ctx.Err(), log))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop stops every worker with SIGTERM (by its pid), waits for it, and
// removes its data directory; a worker still there after a minute is
// killed.
func (fl *serveFleet) stop() {
	for _, w := range fl.workers {
		w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range fl.workers {
		select {
		case <-w.exited:
		case <-time.After(time.Minute):
			w.cmd.Process.Kill()
			<-w.exited
		}
		os.RemoveAll(w.data)
	}
}

// dbBound is each worker's connection bound, as corral serve resolves it.
func (fl *serveFleet) dbBound() int {
	if fl.dbMaxConns > 0 {
		return fl.dbMaxConns
	}
	return postgres.ConnsFor(fl.maxRuns)
}

// metrics scrapes every worker's /metrics and adds up the admission and
// slot release histograms and the ends the workers recorded.
func (fl *serveFleet) metrics(ctx context.Context) (adm, rel histogram, finished int) {
	for _, w := range fl.workers {
		text, err := w.c.Metrics(ctx)
		benchutil.Check(err)
		adm.add(text, "corral_admission_seconds")
		rel.add(text, "corral_slot_release_seconds")
		finished += sumCounter(text, "corral_executions_finished_total")
	}
	return adm, rel, finished
}
