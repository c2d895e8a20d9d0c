// Package servetest starts real `corral serve` processes for tests: on a
// free loopback port, with the test's tag in the environment of the service
// and passed on to every run it starts (--pass-env), none of the machine's
// CORRAL_ variables, and a stop by the pid the test started when the test
// ends.
package servetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/testutil"
)

// Env returns the environment for corral processes of a test: the test's
// tag (inherited by every run), no CORRAL_ variables of the machine, and
// extra.
func Env(tag string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CORRAL_") {
			env = append(env, kv)
		}
	}
	return append(append(env, testutil.TagEnvVar(tag)), extra...)
}

// Build builds the package pkg (a path go build understands) into dir and
// returns the binary's path.
func Build(t testing.TB, dir, name, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Commands are corral's programs as go install ./cmd/... installs them:
// corral, the programs it executes for corral mcp and corral shell, for
// corral serve and for the client commands (corral submit, ps, logs,
// cancel, agents, schedules), and the helper its runs start their shims
// from.
var Commands = []string{"corral", "corral-client", "corral-mcp", "corral-serve", "corral-shim"}

// BuildCacheEnv names a directory where BuildCorral keeps the programs it
// builds, for later test binaries built with the same tags to reuse:
// .ci/mutations gives the test binary of each mutant and package one, so
// that its tests, each run alone, build the programs once.
const BuildCacheEnv = "CORRAL_TEST_BUILD_CACHE"

// BuildCorral builds Commands into dir, with the build tags given (the
// mutation tags of a test binary, so that the programs carry its mutant),
// and returns the path of corral.
func BuildCorral(dir string, tags ...string) (string, error) {
	// The calling test binary's mutation tags always go in: an explicit
	// -tags replaces GOFLAGS' (.ci/mutations), and a mutant must be in the
	// programs the tests run.
	tags = append(MutationTags(), tags...)
	cache := os.Getenv(BuildCacheEnv)
	if cache == "" {
		return filepath.Join(dir, "corral"), buildCommands(dir, tags)
	}
	built := filepath.Join(cache, "tags-"+strings.Join(append([]string{"none"}, tags...), ","))
	if _, err := os.Stat(filepath.Join(built, "complete")); err != nil {
		if err := os.MkdirAll(built, 0o755); err != nil {
			return "", err
		}
		if err := buildCommands(built, tags); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(built, "complete"), nil, 0o644); err != nil {
			return "", err
		}
	}
	for _, name := range Commands {
		b, err := os.ReadFile(filepath.Join(built, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), b, 0o755)
		}
		if err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "corral"), nil
}

// buildCommands builds Commands into dir with tags, in one go build: the
// packages are loaded once and the programs linked in parallel (a build
// each took 2.5 times as long).
func buildCommands(dir string, tags []string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	for _, name := range Commands {
		args = append(args, "github.com/corralrun/corral/cmd/"+name)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(Commands, " "), err, out)
	}
	return nil
}

// MutationTags returns the mutation tags (.ci/mutations) this program was
// built with, read from its build information: a test binary passes them
// to BuildCorral, so that a mutant of any of corral's programs is in the
// programs it runs.
func MutationTags() []string {
	var tags []string
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key != "-tags" {
				continue
			}
			for _, t := range strings.Split(s.Value, ",") {
				if strings.HasPrefix(t, "mutation_") {
					tags = append(tags, t)
				}
			}
		}
	}
	return tags
}

// Server is a running `corral serve` process.
type Server struct {
	// Addr is the address it listens on; Data its data directory; Token
	// its API token (read from the data directory unless given in Env).
	Addr, Data, Token string
	Cmd               *exec.Cmd

	t      testing.TB
	exited chan struct{}
	mu     sync.Mutex
	log    strings.Builder
}

// Options configure Start.
type Options struct {
	// Data is the data directory (required).
	Data string
	// Tag is the test's tag (required).
	Tag string
	// Args are more flags for corral serve.
	Args []string
	// Env adds KEY=VALUE entries to the service's environment.
	Env []string
	// User, if set, runs the service as that user (the test must run as
	// root; Unix only).
	User *User
}

// User is a user and group to run the service as.
type User struct{ UID, GID uint32 }

// Start starts bin serve on 127.0.0.1:0, waits until it listens, and stops
// it (SIGTERM, then SIGKILL after a minute) when the test ends.
func Start(t testing.TB, bin string, o Options) *Server {
	t.Helper()
	s := &Server{Data: o.Data, t: t, exited: make(chan struct{})}
	s.Cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", o.Data, "--pass-env", testutil.TagEnv}, o.Args...)...)
	s.Cmd.Env = Env(o.Tag, o.Env...)
	if o.User != nil {
		runAs(t, s.Cmd, o.User)
	}
	pipe, err := s.Cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.log.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "corral serve: listening on "); ok {
				_, rest, _ = strings.Cut(rest, "://")
				addrc <- strings.Fields(rest)[0]
			}
		}
		s.Cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.Stop)
	select {
	case s.Addr = <-addrc:
	case <-s.exited:
		t.Fatalf("corral serve exited before listening:\n%s", s.Log())
	case <-time.After(60 * time.Second):
		t.Fatalf("corral serve did not listen within 60s:\n%s", s.Log())
	}
	for _, kv := range o.Env {
		if v, ok := strings.CutPrefix(kv, "CORRAL_TOKEN="); ok {
			s.Token = v
		}
	}
	if s.Token == "" {
		if b, err := os.ReadFile(filepath.Join(o.Data, "token")); err == nil {
			s.Token = strings.TrimSpace(string(b))
		}
	}
	return s
}

// Log returns what the service printed on stderr so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Pid returns the service's pid.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Exited is closed when the service process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// Kill9 kills the service by its pid, as a crash would, and waits for it.
func (s *Server) Kill9() {
	s.Cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// Stop asks the service to stop (SIGTERM) and waits for it; after a
// minute it kills it and fails the test.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.Cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
		s.t.Errorf("corral serve did not stop within 60s of SIGTERM:\n%s", s.Log())
	}
}
