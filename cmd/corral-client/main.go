// Command corral-client is the task service's client commands — corral
// submit, ps, logs, cancel, agents and schedules (docs/service.md) — in a
// program of their own: the service's Go client (package client), and
// with it net/http, crypto/tls and crypto/x509, are linked here and not
// into corral, whose every command (corral run, corral timeout, corral
// --version) would otherwise pay for their start. corral finds it beside
// its executable or on PATH and executes it in its place (same pid, the
// command's name then its arguments); go install ./cmd/... installs both.
// Run as corral-client, it takes the command first: corral-client submit
// [flags] AGENT INPUT.
package main

import (
	"os"

	"github.com/corralrun/corral/internal/cliflag"
)

// program is corral-client: its commands are registered by submit.go,
// ps.go, logs.go, cancel.go, agents.go and schedules.go under the names of
// cliflag.ClientCommands.
var program = &cliflag.Companion{
	Name:     "corral-client",
	About:    "corral-client runs the task service's client commands; corral executes\nit in its place for each of them.",
	Commands: cliflag.ClientCommands,
}

func register(name string, run func(args []string) int) { program.Register(name, run) }

func main() {
	os.Exit(program.Main(os.Args[1:]))
}
