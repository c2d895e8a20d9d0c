// Command corral-mcp is `corral mcp`, `corral shell` and `corral headless`
// (docs/shell.md, docs/mcp.md, docs/headless.md) in a program of their
// own: the MCP SDK, its JSON Schema package, encoding/gob, the shell tool
// and the headless turn's stream parsing are linked here and not into
// corral, whose every command (and every run's helper) would otherwise
// pay for their start. corral finds it beside its executable or on PATH
// and executes it in its place (same pid, the command's name then its
// arguments); go install ./cmd/... installs both. Run as corral-mcp, it
// takes the command first: corral-mcp mcp [flags], corral-mcp shell
// [flags], corral-mcp headless [flags] -- AGENT_CMD.
package main

import (
	"os"

	"github.com/corralrun/corral/internal/cliflag"
)

// program is corral-mcp: its commands are registered by mcp.go and
// shell.go under the names of cliflag.MCPCommands.
var program = &cliflag.Companion{
	Name:       "corral-mcp",
	About:      "corral-mcp runs corral's MCP server, agent shell and headless agent\nturns; corral mcp, corral shell and corral headless execute it in their place.",
	Commands:   cliflag.MCPCommands,
	Server:     true,
	NotServers: []string{"headless"}, // a command line's program: a closed pipe ends it
}

func register(name string, run func(args []string) int) { program.Register(name, run) }

func main() {
	os.Exit(program.Main(os.Args[1:]))
}

// exitUsage is corral's status for a command line it cannot read.
const exitUsage = cliflag.ExitUsage
