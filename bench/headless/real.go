package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/capture"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// The real CLIs (-real N): Claude Code and Codex against internal/fakemodel
// answering 401 to every request. The figure runs from the agent's first
// report of the failure (Claude Code's first api_retry line, Codex's first
// "Reconnecting..." error line, as read from its stream) to the caller
// holding a failed result: corral's turn, against the peer that waits for
// the CLI to end the turn itself (its result line or its exit), which
// retries first.

// realBench runs the measurements for each CLI that is installed.
func realBench() {
	fmt.Printf("\ntime from the agent's first report of a 401 to the caller having a failed result\n(real CLIs against internal/fakemodel)\n\n")
	fmt.Printf("%-34s %6s %10s %10s %10s %10s\n", "strategy", "runs", "min", "median", "p95", "max")
	for _, name := range []string{"claude", "codex"} {
		bin, err := testutil.FindNPMBin(name)
		if err != nil {
			fmt.Printf("%-34s %s\n", name, err)
			continue
		}
		var ours []time.Duration
		for i := 0; i < *realRuns; i++ {
			ours = append(ours, realRun(name, bin, false))
		}
		report("corral headless, "+name, ours)
		if *realPeer {
			report("peer: wait for "+name+"'s own end", []time.Duration{realRun(name, bin, true)})
		}
	}
}

// realRun measures one turn; peer waits for the CLI to end the turn itself
// instead of acting on the stream.
func realRun(name, bin string, peer bool) time.Duration {
	sc, _ := fakemodel.Named("auth", fakemodel.Options{})
	srv, err := fakemodel.Start(sc)
	if err != nil {
		fail(err)
	}
	defer srv.Close()
	dir := benchutil.TempDir("", "bench-headless-real-")
	defer os.RemoveAll(dir)
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	os.MkdirAll(home, 0o700)
	os.MkdirAll(tmp, 0o700)
	var a fakemodel.Agent
	if name == "claude" {
		a = srv.Claude(bin, home, tmp, "Say pong.")
	} else {
		a = srv.Codex(bin, home, tmp, "Say pong.")
	}

	// first is when the stream first reported the failure.
	first := make(chan time.Time, 1)
	onRetry := func(e headless.Event) {
		if e.Kind == headless.KindRetry {
			select {
			case first <- e.Time:
			default:
			}
		}
	}
	if peer {
		return peerRealRun(a, onRetry, first)
	}
	turn, err := headless.Start(context.Background(), &headless.Spec{
		Args: a.Args, EnvMode: corral.EnvClean, Env: a.Env,
		Timeout: 10 * time.Minute, Grace: time.Second, OnEvent: onRetry,
	})
	if err != nil {
		fail(err)
	}
	r, _ := turn.Wait()
	got := time.Now()
	full, _ := turn.Close()
	if r.ErrorType != corral.ErrorAuth || full.Process.Survivors != 0 {
		fail(fmt.Errorf("%s: %s %q (%s), %d survivors", name, r.Status, r.ErrorType, r.Reason, full.Process.Survivors))
	}
	return got.Sub(<-first)
}

// peerRealRun runs the CLI under the supervision core only, reads its
// stream with the same Parser, and acts on nothing but the CLI's own end
// of the turn: its final result, or its exit.
func peerRealRun(a fakemodel.Agent, onRetry func(headless.Event), first chan time.Time) time.Duration {
	var pr headless.Parser
	ended := make(chan struct{})
	var once sync.Once
	lines := &capture.Lines{Max: headless.DefaultMaxLine, Func: func(line []byte, _ bool) {
		for _, e := range pr.Parse(line, time.Now()) {
			onRetry(e)
			if e.Kind == headless.KindResult && e.Final {
				once.Do(func() { close(ended) })
			}
		}
	}}
	p, err := proc.Start(context.Background(), &proc.Spec{Args: a.Args, EnvMode: corral.EnvClean, Env: a.Env,
		Stdout: lines, Timeout: 10 * time.Minute, Grace: time.Second})
	if err != nil {
		fail(err)
	}
	select {
	case <-ended:
	case <-p.Done():
	}
	got := time.Now()
	p.Stop()
	r, _ := p.Wait()
	if r.Survivors != 0 {
		fail(fmt.Errorf("%d survivors", r.Survivors))
	}
	return got.Sub(<-first)
}
