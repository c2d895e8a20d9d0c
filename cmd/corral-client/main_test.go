package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corralrun/corral/internal/cliflag"
)

// TestWithoutACommandCorralClientPrintsItsUsage: corral-client run with
// no command, or one it does not have, prints a usage naming its commands
// and exits 2, as corral does; help prints it and exits 0.
func TestWithoutACommandCorralClientPrintsItsUsage(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "corral-client")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		code int
	}{{nil, exitUsage}, {[]string{"serve"}, exitUsage}, {[]string{"--addr"}, exitUsage}, {[]string{"help"}, 0}, {[]string{"-h"}, 0}} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code {
			t.Errorf("corral-client %q exited %d, want %d; output:\n%s", c.args, code, c.code, out)
		}
		if !strings.Contains(string(out), "Usage:\n  corral-client COMMAND") {
			t.Errorf("corral-client %q prints no usage:\n%s", c.args, out)
		}
		for _, cmd := range cliflag.ClientCommands {
			if !strings.Contains(string(out), cmd.Summary) {
				t.Errorf("corral-client %q: the usage does not name %s:\n%s", c.args, cmd.Name, out)
			}
		}
	}
}

// TestEveryClientCommandIsRegistered: each command corral lists as
// corral-client's (cliflag.ClientCommands) is one corral-client has, and
// it has no other: corral would send a command to a program without it.
func TestEveryClientCommandIsRegistered(t *testing.T) {
	listed := map[string]bool{}
	for _, c := range cliflag.ClientCommands {
		listed[c.Name] = true
		if commands[c.Name] == nil {
			t.Errorf("corral lists %s as corral-client's, which has no such command", c.Name)
		}
	}
	for name := range commands {
		if !listed[name] {
			t.Errorf("corral-client has %s, which cliflag.ClientCommands does not list: corral cannot run it", name)
		}
	}
}
