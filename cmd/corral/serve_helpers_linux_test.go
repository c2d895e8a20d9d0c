package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/procfs"
	"github.com/corralrun/corral/internal/testutil"
)

// served is a real corral serve process started by a test.
type served struct {
	t      *testing.T
	cmd    *exec.Cmd
	addr   string
	data   string
	token  string
	tag    string
	c      *client.Client
	mu     sync.Mutex
	stderr strings.Builder
	exited chan struct{}
}

// serveEnv is the environment of served processes and CLI commands: the
// test's tag (inherited by every run), and no CORRAL_ variables of the
// machine.
func serveEnv(tag string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CORRAL_") {
			env = append(env, kv)
		}
	}
	return append(append(env, testutil.TagEnvVar(tag)), extra...)
}

// startServe starts corral serve on a free loopback port with data dir
// data, waits until it listens, and stops it (SIGTERM) at the end of the
// test unless it was already stopped.
func startServe(t *testing.T, data, tag string, args ...string) *served {
	t.Helper()
	s := &served{t: t, data: data, tag: tag, exited: make(chan struct{})}
	s.cmd = exec.Command(corralBin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, args...)...)
	s.cmd.Env = serveEnv(tag)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "corral serve: listening on http://"); ok {
				addrc <- strings.Fields(rest)[0]
			}
		}
		s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop() })
	select {
	case s.addr = <-addrc:
	case <-s.exited:
		t.Fatalf("corral serve exited before listening:\n%s", s.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("corral serve did not listen within 30s:\n%s", s.log())
	}
	b, err := os.ReadFile(filepath.Join(data, "token"))
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(b))
	s.c = client.New(s.addr, s.token)
	return s
}

func (s *served) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func (s *served) pid() int { return s.cmd.Process.Pid }

// kill9 kills the service by its pid, as a crash would, and waits for it.
func (s *served) kill9() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop asks the service to stop (SIGTERM) and waits for it.
func (s *served) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
		s.t.Errorf("corral serve did not stop within 60s of SIGTERM")
	}
}

// cli runs a corral client command against s and returns its stdout,
// stderr and exit status.
func (s *served) cli(args ...string) (stdout, stderr string, code int) {
	s.t.Helper()
	cmd := exec.Command(corralBin, args...)
	cmd.Env = serveEnv(s.tag, "CORRAL_ADDR="+s.addr, "CORRAL_DATA="+s.data)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
