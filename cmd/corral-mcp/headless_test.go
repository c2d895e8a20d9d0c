//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// buildHeadlessTools builds the fake agent (and, with corral, the corral
// binary with this program beside it, which corral headless executes in
// its place) into a temporary directory.
func buildHeadlessTools(t *testing.T, withCorral bool) (fake, corralBin string) {
	t.Helper()
	dir := t.TempDir()
	fake = filepath.Join(dir, "fakeagent")
	if out, err := exec.Command("go", "build", "-o", fake, "github.com/corralrun/corral/internal/fakeagent").CombinedOutput(); err != nil {
		t.Fatalf("building the fake agent: %v\n%s", err, out)
	}
	if withCorral {
		corralBin = filepath.Join(dir, "corral")
		if out, err := exec.Command("go", "build", "-o", dir+"/", "github.com/corralrun/corral/cmd/corral", "github.com/corralrun/corral/cmd/corral-mcp").CombinedOutput(); err != nil {
			t.Fatalf("building corral: %v\n%s", err, out)
		}
	}
	return fake, corralBin
}

// runHeadless runs corral headless in this process with the fake agent,
// its processes tagged, and checks that none of them survives.
func runHeadless(t *testing.T, flags []string, agent ...string) (code int, stdout, stderr string) {
	t.Helper()
	tag := testutil.Tag(t)
	args := append([]string{"--setenv", testutil.TagEnvVar(tag)}, flags...)
	args = append(append(args, "--"), agent...)
	var out, errOut bytes.Buffer
	code = headlessCmd(args, &out, &errOut)
	testutil.AssertNoTagged(t, tag, 5*time.Second)
	return code, out.String(), errOut.String()
}

func TestHeadlessCommand(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	testutil.CheckFDs(t)
	fake, _ := buildHeadlessTools(t, false)

	t.Run("json reports the turn", func(t *testing.T) {
		code, out, errOut := runHeadless(t, []string{"--json"}, fake, "success")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, out)
		}
		for _, k := range []string{"status", "error_type", "finalized_by", "result", "session_id", "num_turns", "cost_usd", "usage", "exit_code", "duration_ms", "stalled_tool", "parse_errors", "events", "tools"} {
			if _, ok := m[k]; !ok {
				t.Errorf("no %q in %s", k, out)
			}
		}
		if m["status"] != "succeeded" || m["error_type"] != "" || m["finalized_by"] != "result" || m["result"] != "There are two files." {
			t.Errorf("wrong verdict: %s", out)
		}
	})

	t.Run("live view", func(t *testing.T) {
		code, out, _ := runHeadless(t, nil, fake, "success")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		for _, want := range []string{"● session 5f0c6c8e", "→ Bash toolu_1", "✓ Bash toolu_1", "There are two files.", "succeeded · by result · 2 turns · $0.0123"} {
			if !strings.Contains(out, want) {
				t.Errorf("live view lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("returns while a child holds the pipe", func(t *testing.T) {
		began := time.Now()
		code, out, _ := runHeadless(t, []string{"--json", "--linger", "100ms", "--grace", "200ms"}, fake, "-linger", "10m", "linger")
		if code != 0 || !strings.Contains(out, `"status":"succeeded"`) {
			t.Fatalf("exit %d: %s", code, out)
		}
		if d := time.Since(began); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
	})

	for _, c := range []struct {
		name   string
		flags  []string
		agent  []string
		code   int
		expect string
	}{
		{"crash", []string{"--json"}, []string{"crash"}, 1, `"error_type":"crash"`},
		{"budget", []string{"--json", "--timeout", "500ms"}, []string{"budget"}, cliflag.ExitTimedOut, `"error_type":"timeout"`},
		{"tool timeout glob", []string{"--json", "--tool-timeout", "mcp__slack__*=300ms"}, []string{"hung-mcp"}, 1, `"name":"mcp__slack__post_message"`},
		{"idle", []string{"--json", "--idle-timeout", "300ms"}, []string{"idle"}, 1, `"error_type":"idle"`},
		{"auth", []string{"--json"}, []string{"auth-stderr"}, 1, `"error_type":"auth"`},
		{"permission", []string{"--json", "--require-permission-mode", "bypassPermissions"}, []string{"-perm", "default", "permission"}, 1, `"error_type":"permission_mode"`},
		{"codex", []string{"--json", "--format", "codex"}, []string{"-linger", "0", "codex"}, 0, `"format":"codex"`},
		{"failure in the live view", nil, []string{"max-turns"}, 1, "failed (max_turns)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runHeadless(t, c.flags, append([]string{fake}, c.agent...)...)
			if code != c.code || !strings.Contains(out, c.expect) {
				t.Fatalf("exit %d (want %d), output lacks %s:\n%s\n%s", code, c.code, c.expect, out, errOut)
			}
		})
	}

	t.Run("transcript", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		code, out, _ := runHeadless(t, []string{"--json", "--transcript", path}, fake, "success")
		if code != 0 || !strings.Contains(out, path) {
			t.Fatalf("exit %d: %s", code, out)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			code int
		}{
			{[]string{}, cliflag.ExitCorralFailed},
			{[]string{"--format", "yaml", "--", fake, "success"}, cliflag.ExitCorralFailed},
			{[]string{"--tool-timeout", "Bash", "--", fake, "success"}, cliflag.ExitCorralFailed},
			{[]string{"--tool-timeout", "Bash=soon", "--", fake, "success"}, cliflag.ExitCorralFailed},
			{[]string{"--containment", "castle", "--", fake, "success"}, cliflag.ExitCorralFailed},
			{[]string{"--no-such-flag"}, cliflag.ExitCorralFailed},
			{[]string{"--", "no-such-agent-xyz"}, cliflag.ExitNotFound},
			{[]string{"-h"}, 0},
		} {
			var out, errOut bytes.Buffer
			if code := headlessCmd(c.args, &out, &errOut); code != c.code {
				t.Errorf("%v: exit %d, want %d\n%s", c.args, code, c.code, errOut.String())
			}
		}
	})
}

// TestHeadlessSIGINTCancelsTheTurnAndLeavesNothing runs the corral binary
// and interrupts it as a user at a terminal would.
func TestHeadlessSIGINTCancelsTheTurnAndLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	fake, corralBin := buildHeadlessTools(t, true)
	tag := testutil.Tag(t)
	var out bytes.Buffer
	seen := make(chan struct{})
	w := &watchWriter{w: &out, want: "→ Bash", seen: seen}
	p, err := proc.Start(context.Background(), &proc.Spec{
		Args:    []string{corralBin, "headless", "--interrupt-grace", "5s", "--", fake, "cancel"},
		Env:     []string{testutil.TagEnvVar(tag)},
		Stdout:  w,
		Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		p.Stop()
		p.Wait()
		t.Fatalf("the turn never showed its tool call:\n%s", out.String())
	}
	if err := p.Signal(2); err != nil { // SIGINT
		t.Fatal(err)
	}
	r, _ := p.Wait()
	if r.ExitCode != 130 || !strings.Contains(r.Stdout.Text(), "cancelled (cancelled)") {
		t.Fatalf("exit %d (%s):\n%s\n%s", r.ExitCode, r.Status(), r.Stdout.Text(), r.Stderr.Text())
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

// watchWriter closes seen when want has been written.
type watchWriter struct {
	w    *bytes.Buffer
	want string
	seen chan struct{}
	done bool
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.w.Write(p)
	if !w.done && strings.Contains(w.w.String(), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}
