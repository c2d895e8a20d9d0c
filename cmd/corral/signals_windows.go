package main

import (
	"github.com/corralrun/corral/internal/cliflag"
	"os"
	"os/signal"

	"github.com/corralrun/corral/proc"
)

var stopSignals = cliflag.StopSignals

// treeSignals is what corral run does with the signals it gets: SIGINT and
// SIGTERM stop the run.
type treeSignals struct{ c chan os.Signal }

// watchTreeSignals catches the stop signals; it is no round trip here.
// They are never let go: the process ends with the run.
func watchTreeSignals() *treeSignals {
	t := &treeSignals{c: make(chan os.Signal, 2)}
	signal.Notify(t.c, stopSignals...)
	return t
}

func (t *treeSignals) hold(*proc.Spec) {}

func (t *treeSignals) follow(p *proc.Process) os.Signal {
	select {
	case <-p.Done():
		return nil
	case s := <-t.c:
		return s
	}
}
