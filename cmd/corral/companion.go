package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/corralrun/corral/internal/cliflag"
)

// The task service is a companion program, corral-serve: it links the SQL
// drivers, River, the HTTP API and the web UI; corral mcp and corral shell
// are another, corral-mcp, run as corral-mcp mcp|shell ARGS: it links the
// MCP SDK, its JSON Schema package and the shell tool; the service's client
// commands (submit, ps, logs, cancel, agents, schedules) are a third,
// corral-client, run as corral-client COMMAND ARGS: it links the service's
// Go client, and with it net/http, crypto/tls and crypto/x509. Every other
// command (and every run's helper) would pay their start if they were
// linked here.
func init() {
	register("serve", "run the task service: agents, slots, schedules, HTTP API, web UI", func(args []string) int {
		return runCompanion("corral-serve", args)
	})
	registerCompanion("corral-mcp", cliflag.MCPCommands)
	registerCompanion("corral-client", cliflag.ClientCommands)
}

// registerCompanion registers the commands of the companion program
// prog, which runs each as prog COMMAND ARGS.
func registerCompanion(prog string, cmds []struct{ Name, Summary string }) {
	for _, c := range cmds {
		name := c.Name
		register(name, c.Summary, func(args []string) int {
			return runCompanion(prog, append([]string{name}, args...))
		})
	}
}

// companion returns the path of the program name: beside corral's
// executable, else on PATH.
func companion(name string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), name+exeSuffix)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && runnable(fi) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", errors.New(name + " is neither beside corral nor on PATH: install corral's programs together (go install ./cmd/..., or go build -o DIR/ ./cmd/...)")
}

// runCompanion runs the companion name with args in this process's place
// and returns its exit status (on Unix it never returns but on failure).
func runCompanion(name string, args []string) int {
	path, err := companion(name)
	if err == nil {
		err = execCompanion(path, args)
	}
	fmt.Fprintf(os.Stderr, "corral: %v\n", err)
	return exitCorralFailed
}
