// Command headless measures how long after an agent's final result line
// the caller gets the result, while the agent lingers and a child holds its
// stdout open (the case that pinned earlier executors for their whole
// budget). It runs corral's headless package and, in the same run, the
// strategies of its peers on the same fake agent:
//
//   - poll: check every 2 s whether a result line has been seen, then stop;
//   - idle gate: after a result, wait for 300 s of silence, then stop;
//   - wait for exit: wait for the process and its pipes, up to the budget.
//
// Every run is supervised by corral's core, so nothing outlives it.
//
// With -real N it also runs the real Claude Code and Codex against
// internal/fakemodel answering 401, and measures how long after the
// agent's first report of the failure the caller has a failed result:
// corral's turn against waiting for the CLI to end the turn itself.
//
//	go run ./bench/headless [-n 20] [-idle-gate 300s] [-budget 10s] [-real 10 [-only-real]]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/proc"
)

var (
	n        = flag.Int("n", 20, "runs of corral's headless turn")
	polls    = flag.Int("poll-runs", 10, "runs of the 2 s poll peer")
	pollEvry = flag.Duration("poll", 2*time.Second, "poll period of the poll peer")
	gate     = flag.Duration("idle-gate", 300*time.Second, "silence the idle-gate peer waits for (one run)")
	budget   = flag.Duration("budget", 10*time.Second, "budget of the wait-for-exit peer (one run); its figure is the whole budget")
	agent    = flag.String("agent", "", "fake agent binary (built from internal/fakeagent when empty)")
	skipGate = flag.Bool("skip-idle-gate", false, "skip the idle-gate peer (it takes the whole gate)")
	realRuns = flag.Int("real", 0, "runs of each real CLI's 401 turn under corral (0: skip); needs the pinned npm CLIs ($CORRAL_NPM_DIR, or the cache .ci/run fills)")
	realPeer = flag.Bool("real-peer", true, "with -real, also time once each CLI's own end of the 401 turn (Claude Code retries for about 3 minutes)")
	onlyReal = flag.Bool("only-real", false, "run only the real-CLI measurements (-real)")
)

func main() {
	flag.Parse()
	if *onlyReal {
		if *realRuns == 0 {
			*realRuns = 10
		}
		realBench()
		return
	}
	if *agent == "" {
		dir := benchutil.TempDir("", "bench-headless-")
		defer os.RemoveAll(dir)
		*agent = filepath.Join(dir, "fakeagent")
		if out, err := exec.Command("go", "build", "-o", *agent, "github.com/corralrun/corral/internal/fakeagent").CombinedOutput(); err != nil {
			fail(fmt.Errorf("building the fake agent: %v\n%s", err, out))
		}
	}
	dir := benchutil.TempDir("", "bench-headless-ts-")
	defer os.RemoveAll(dir)

	fmt.Printf("time from the final result line to the caller having the result,\nagent lingering with a child holding stdout (fake agent 'linger')\n\n")
	fmt.Printf("%-34s %6s %10s %10s %10s %10s\n", "strategy", "runs", "min", "median", "p95", "max")

	var ours []time.Duration
	for i := 0; i < *n; i++ {
		ours = append(ours, corralRun(dir, i))
	}
	report("corral headless", ours)

	var poll []time.Duration
	for i := 0; i < *polls; i++ {
		poll = append(poll, peerRun(dir, i, pollStrategy))
	}
	report(fmt.Sprintf("peer: poll every %v", *pollEvry), poll)

	if !*skipGate {
		report(fmt.Sprintf("peer: %v idle gate", *gate), []time.Duration{peerRun(dir, 0, gateStrategy)})
	}
	report(fmt.Sprintf("peer: wait for exit (budget %v)", *budget), []time.Duration{peerRun(dir, 0, exitStrategy)})
	if *realRuns > 0 {
		realBench()
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/headless:", err)
	benchutil.Exit(1)
}

func lingerArgs(ts string) []string {
	return []string{*agent, "-ts", ts, "-linger", "1h", "linger"}
}

func stamp(path string) time.Time {
	b, err := os.ReadFile(path)
	if err != nil {
		fail(fmt.Errorf("reading the agent's stamp: %w", err))
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		fail(err)
	}
	return time.Unix(0, ns)
}

// corralRun measures one turn under the headless package.
func corralRun(dir string, i int) time.Duration {
	ts := filepath.Join(dir, fmt.Sprintf("corral-%d", i))
	turn, err := headless.Start(context.Background(), &headless.Spec{
		Args:    lingerArgs(ts),
		Timeout: time.Minute,
		Grace:   200 * time.Millisecond,
	})
	if err != nil {
		fail(err)
	}
	r, _ := turn.Wait()
	got := time.Now()
	if !r.Succeeded() {
		fail(fmt.Errorf("turn failed: %s %s", r.ErrorType, r.Reason))
	}
	full, _ := turn.Close()
	if full.Process.Survivors != 0 {
		fail(fmt.Errorf("%d survivors", full.Process.Survivors))
	}
	return got.Sub(stamp(ts))
}

type strategy int

const (
	pollStrategy strategy = iota
	gateStrategy
	exitStrategy
)

// resultWatch is a peer's stdout reader: it notes when a result line came
// and when the stream last said anything.
type resultWatch struct {
	buf      bytes.Buffer
	seen     atomic.Bool
	lastNano atomic.Int64
}

func (w *resultWatch) Write(p []byte) (int, error) {
	w.lastNano.Store(time.Now().UnixNano())
	if !w.seen.Load() {
		w.buf.Write(p)
		if bytes.Contains(w.buf.Bytes(), []byte(`"type":"result"`)) {
			w.seen.Store(true)
		}
	}
	return len(p), nil
}

// peerRun measures one turn under a peer's strategy.
func peerRun(dir string, i int, s strategy) time.Duration {
	ts := filepath.Join(dir, fmt.Sprintf("peer-%d-%d", s, i))
	w := &resultWatch{}
	spec := &proc.Spec{Args: lingerArgs(ts), Stdout: w, Grace: 200 * time.Millisecond}
	if s == exitStrategy {
		spec.Timeout = *budget
	}
	p, err := proc.Start(context.Background(), spec)
	if err != nil {
		fail(err)
	}
	var got time.Time
	switch s {
	case pollStrategy:
		// The result meets the poll at a random phase, as in a real run.
		time.Sleep(rand.N(*pollEvry))
		for !w.seen.Load() {
			time.Sleep(*pollEvry)
		}
		got = time.Now()
		p.Stop()
	case gateStrategy:
		for {
			time.Sleep(100 * time.Millisecond)
			if w.seen.Load() && time.Since(time.Unix(0, w.lastNano.Load())) >= *gate {
				got = time.Now()
				break
			}
		}
		p.Stop()
	case exitStrategy:
		p.Wait()
		got = time.Now()
	}
	r, _ := p.Wait()
	if r.Survivors != 0 {
		fail(fmt.Errorf("%d survivors", r.Survivors))
	}
	return got.Sub(stamp(ts))
}

func report(name string, d []time.Duration) {
	slices.Sort(d)
	q := func(f float64) time.Duration { return d[min(len(d)-1, int(f*float64(len(d))))] }
	fmt.Printf("%-34s %6d %10s %10s %10s %10s\n", name, len(d), round(d[0]), round(q(0.5)), round(q(0.95)), round(d[len(d)-1]))
}

func round(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
