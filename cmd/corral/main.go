// Command corral runs commands and headless coding agents with deadlines
// that hold and nothing left behind.
//
// Run "corral help" for the list of commands.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/corralrun/corral/internal/cliflag"
)

// command is one subcommand: it parses its own flags and returns the exit
// status.
type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string) int) {
	commands[name] = command{summary: summary, run: run}
}

func main() {
	if invokedAsTimeout(os.Args[0]) {
		os.Exit(gnuTimeout(os.Args[0], os.Args[1:]))
	}
	code := dispatch(os.Args[1:])
	flushTelemetry() // bounded: spans ended before the exit are exported
	os.Exit(code)
}

func dispatch(args []string) int {
	if len(args) == 0 {
		usage()
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"})
			}
		}
		usage()
		return 0
	case "version", "--version":
		fmt.Println("corral", version())
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "corral: unknown command %q\n\n", name)
		usage()
		return 2
	}
	if name != "timeout" && name != "run" { // they catch their own
		cliflag.CatchStraySignals(false)
	}
	return c.run(args[1:])
}

func usage() {
	var b strings.Builder
	b.WriteString("corral runs commands and headless coding agents with deadlines that hold\nand nothing left behind.\n\nUsage:\n  corral COMMAND [flags] [args]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, commands[n].summary)
	}
	b.WriteString("\nRun \"corral help COMMAND\" for a command's flags.\n")
	fmt.Fprint(os.Stderr, b.String())
}
