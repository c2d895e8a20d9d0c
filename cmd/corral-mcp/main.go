// Command corral-mcp is `corral mcp` and `corral shell` (docs/shell.md,
// docs/mcp.md) in a program of their own: the MCP SDK, its JSON Schema
// package, encoding/gob and the shell tool are linked here and not into
// corral, whose every command (and every run's helper) would otherwise
// pay for their start. corral finds it beside its executable or on PATH
// and executes it in its place (same pid, the command's name then its
// arguments); go install ./cmd/... installs both. Run as corral-mcp, it
// takes the command first: corral-mcp mcp [flags], corral-mcp shell
// [flags].
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/corralrun/corral/internal/cliflag"
)

// commands are this program's commands, registered by mcp.go and
// shell.go under the names of cliflag.MCPCommands.
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
		return 0
	case "version", "--version":
		fmt.Println("corral-mcp", cliflag.Version())
		return 0
	}
	run, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "corral-mcp: unknown command %q\n\n", args[0])
		usage()
		return exitUsage
	}
	cliflag.CatchStraySignals(true)
	code := run(args[1:])
	cliflag.FlushTelemetry() // bounded: spans ended before the exit are exported
	return code
}

// exitUsage is corral's status for a command line it cannot read.
const exitUsage = 2

func usage() {
	var b strings.Builder
	b.WriteString("corral-mcp runs corral's MCP server and agent shell; corral mcp and\ncorral shell execute it in their place.\n\nUsage:\n  corral-mcp COMMAND [flags]\n\nCommands:\n")
	for _, c := range cliflag.MCPCommands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.Name, c.Summary)
	}
	b.WriteString("\nRun \"corral-mcp COMMAND -h\" (or \"corral help COMMAND\") for a command's flags.\n")
	fmt.Fprint(os.Stderr, b.String())
}
