package cliflag

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// MCPCommands are the commands of the companion program corral-mcp, which
// corral executes in its place for them (the MCP SDK, its JSON Schema
// package, the shell tool and the headless turn's stream parsing are
// linked there, not into corral), with the summaries both programs' help
// gives them.
var MCPCommands = []struct{ Name, Summary string }{
	{"headless", "run one headless agent turn (Claude Code, Codex), finalized when the agent says it is done"},
	{"mcp", "serve the agent shell tool, or the task service's tools, over MCP (stdio or streamable HTTP)"},
	{"shell", "run commands in a persistent agent shell session and see the results"},
}

// ClientCommands are the commands of the companion program corral-client,
// the task service's client commands, which corral executes in its place
// for them (the service's Go client, and with it net/http, crypto/tls and
// crypto/x509, are linked there, not into corral), with the summaries both
// programs' help gives them.
var ClientCommands = []struct{ Name, Summary string }{
	{"submit", "submit a task to an agent of the task service"},
	{"ps", "list executions of the task service"},
	{"logs", "print (and follow) the log of an execution"},
	{"cancel", "cancel a queued or running execution"},
	{"agents", "list, create, change and delete agents of the task service"},
	{"schedules", "list, create, change, delete and trigger schedules of an agent"},
}

// ExitUsage is corral's status for a command line it cannot read.
const ExitUsage = 2

// Companion is one of corral's companion programs (corral-mcp,
// corral-client): corral executes it in its place as NAME COMMAND ARGS for
// the commands it serves, so that what they link stays out of corral's
// own start. Main reads the command, answers help and version itself,
// and runs the command's function.
type Companion struct {
	// Name is the program's file name; About says what it runs, for its
	// usage (a sentence, its line breaks as printed).
	Name, About string
	// Commands are the commands it serves, which corral registers under
	// the same names (MCPCommands, ClientCommands).
	Commands []struct{ Name, Summary string }
	// Server makes it a server, for CatchStraySignals, and exports the
	// spans its commands ended before it returns (FlushTelemetry).
	Server bool
	// NotServers are commands of a Server that are not servers: a closed
	// pipe ends them as it ends corral's own commands (SIGPIPE is not
	// caught).
	NotServers []string

	run    map[string]func(args []string) int
	stderr io.Writer // where the usage goes; nil: os.Stderr
}

// Register makes run the command name's function.
func (c *Companion) Register(name string, run func(args []string) int) {
	if c.run == nil {
		c.run = map[string]func(args []string) int{}
	}
	c.run[name] = run
}

// Main runs the command args name and returns the exit status: 2 with a
// usage naming the commands when there is none or it is not one of them,
// 0 for help and version.
func (c *Companion) Main(args []string) int {
	if len(args) == 0 {
		c.usage()
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		c.usage()
		return 0
	case "version", "--version":
		fmt.Println(c.Name, Version())
		return 0
	}
	run, ok := c.run[args[0]]
	if !ok {
		fmt.Fprintf(c.errOut(), "%s: unknown command %q\n\n", c.Name, args[0])
		c.usage()
		return ExitUsage
	}
	CatchStraySignals(c.Server && !slices.Contains(c.NotServers, args[0]))
	code := run(args[1:])
	if c.Server {
		FlushTelemetry() // bounded: spans ended before the exit are exported
	}
	return code
}

func (c *Companion) usage() {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nUsage:\n  %s COMMAND [flags] [args]\n\nCommands:\n", c.About, c.Name)
	for _, cmd := range c.Commands {
		fmt.Fprintf(&b, "  %-10s %s\n", cmd.Name, cmd.Summary)
	}
	fmt.Fprintf(&b, "\nRun \"%s COMMAND -h\" (or \"corral help COMMAND\") for a command's flags.\n", c.Name)
	fmt.Fprint(c.errOut(), b.String())
}

// Check reports an error unless every command of Commands is registered,
// and no other: corral would send a command to a program without it, or
// never run one it has.
func (c *Companion) Check() error {
	var errs []error
	listed := map[string]bool{}
	for _, cmd := range c.Commands {
		listed[cmd.Name] = true
		if c.run[cmd.Name] == nil {
			errs = append(errs, fmt.Errorf("corral lists %s as %s's, which has no such command", cmd.Name, c.Name))
		}
	}
	for name := range c.run {
		if !listed[name] {
			errs = append(errs, fmt.Errorf("%s has %s, which its Commands do not list: corral cannot run it", c.Name, name))
		}
	}
	return errors.Join(errs...)
}

func (c *Companion) errOut() io.Writer {
	if c.stderr != nil {
		return c.stderr
	}
	return os.Stderr
}
