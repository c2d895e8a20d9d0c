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
	"fmt"
	"os"
	"strings"

	"github.com/corralrun/corral/internal/cliflag"
)

// commands are this program's commands, registered by submit.go, ps.go,
// logs.go, cancel.go, agents.go and schedules.go under the names of
// cliflag.ClientCommands.
var commands = map[string]func(args []string) int{}

func register(name string, run func(args []string) int) { commands[name] = run }

func main() {
	os.Exit(dispatch(os.Args[1:]))
}

func dispatch(args []string) int {
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage()
		return exitOK
	case "version", "--version":
		fmt.Println("corral-client", cliflag.Version())
		return exitOK
	}
	run, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "corral-client: unknown command %q\n\n", args[0])
		usage()
		return exitUsage
	}
	cliflag.CatchStraySignals(false)
	return run(args[1:])
}

func usage() {
	var b strings.Builder
	b.WriteString("corral-client runs the task service's client commands; corral executes\nit in its place for each of them.\n\nUsage:\n  corral-client COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range cliflag.ClientCommands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.Name, c.Summary)
	}
	b.WriteString("\nRun \"corral-client COMMAND -h\" (or \"corral help COMMAND\") for a command's flags.\n")
	fmt.Fprint(os.Stderr, b.String())
}
