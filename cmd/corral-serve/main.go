// Command corral-serve is `corral serve`, the task service
// (docs/service.md), in a program of its own: the SQL drivers, River,
// the HTTP API and the web UI are linked here and not into corral, whose
// every command (and every run's helper) would otherwise pay for their
// start. corral finds it beside its executable or on PATH and executes it
// in its place (same pid, same arguments after "serve"); go install
// ./cmd/... installs both. Run as corral-serve, it takes corral serve's
// flags.
package main

import (
	"os"

	"github.com/corralrun/corral/internal/cliflag"
)

// serveCommand is this program's one command, registered by serve.go.
var serveCommand func(args []string) int

func register(name, summary string, run func(args []string) int) { serveCommand = run }

func main() {
	cliflag.CatchStraySignals(true)
	code := serveCommand(os.Args[1:])
	cliflag.FlushTelemetry() // bounded: spans ended before the exit are exported
	os.Exit(code)
}
