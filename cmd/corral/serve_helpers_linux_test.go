package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// served is a real corral serve process started by a test.
type served struct {
	*servetest.Server
	t     *testing.T
	addr  string
	data  string
	token string
	tag   string
	c     *client.Client

	cliBound time.Duration // how long cli lets a command run; 0: two minutes
}

// serveEnv is the environment of served processes and CLI commands.
func serveEnv(tag string, extra ...string) []string { return servetest.Env(tag, extra...) }

// startServe starts corral serve on a free loopback port with data dir
// data, waits until it listens, and stops it (SIGTERM) at the end of the
// test unless it was already stopped.
func startServe(t *testing.T, data, tag string, args ...string) *served {
	t.Helper()
	srv := servetest.Start(t, corralBin, servetest.Options{Data: data, Tag: tag, Args: args})
	return &served{Server: srv, t: t, addr: srv.Addr, data: data, token: srv.Token, tag: tag, c: client.New(srv.Addr, srv.Token)}
}

func (s *served) log() string { return s.Log() }

func (s *served) pid() int { return s.Pid() }

func (s *served) kill9() { s.Kill9() }

func (s *served) crash() { s.Crash() }

func (s *served) stop() { s.Stop() }

// cli runs a corral client command against s and returns its stdout,
// stderr and exit status.
func (s *served) cli(args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	cmd := exec.Command(corralBin, args...)
	cmd.Env = serveEnv(s.tag, "CORRAL_ADDR="+s.addr, "CORRAL_DATA="+s.data)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	bound := 2 * time.Minute
	if s.cliBound > 0 {
		bound = s.cliBound
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cmd.Process.Kill()
		case <-done:
		}
	}()
	err := cmd.Run()
	close(done)
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("corral %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// taggedExcept returns the live tagged processes other than pid.
func taggedExcept(tag string, pid int) []procfs.Stat {
	var out []procfs.Stat
	for _, st := range testutil.Tagged(tag) {
		if st.Pid != pid {
			out = append(out, st)
		}
	}
	return out
}
