//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
)

// End-to-end: the corral binary runs the real Claude Code and Codex (the
// pinned npm installs; skipped loudly without them) against the fake model.

// corralWith runs the corral binary with exactly env (and the test's tag),
// and checks that nothing it started outlives it.
func corralWith(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	tag := testutil.Tag(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, corralBin, args...)
	cmd.Env = append(append([]string(nil), env...), testutil.TagEnvVar(tag))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("corral %v: %v", args, err)
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	return out.String(), errb.String(), code
}

// headlessJSON is the part of corral headless --json these tests read.
type headlessJSON struct {
	Status      string         `json:"status"`
	ErrorType   string         `json:"error_type"`
	FinalizedBy string         `json:"finalized_by"`
	Format      string         `json:"format"`
	Result      string         `json:"result"`
	CostUSD     *float64       `json:"cost_usd"`
	Usage       map[string]int `json:"usage"`
	Tools       []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Reason  string `json:"reason"`
	Process struct {
		Survivors int             `json:"survivors"`
		Sandbox   json.RawMessage `json:"sandbox"`
	} `json:"process"`
}

func decodeHeadless(t *testing.T, out string) headlessJSON {
	t.Helper()
	var r headlessJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("corral headless --json: %v\n%s", err, out)
	}
	return r
}

func TestE2EHeadlessClaudeJSON(t *testing.T) {
	srv := testutil.FakeModel(t, "tool", fakemodel.Options{})
	a := testutil.Claude(t, srv, "Run the command.")
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--require-permission-mode", "bypassPermissions", "--"}, a.Args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := decodeHeadless(t, out)
	if r.Status != "succeeded" || r.FinalizedBy != "result" || r.Format != "claude" || !strings.HasPrefix(r.Result, fakemodel.FinalPrefix+fakemodel.ToolMarker) {
		t.Errorf("result %+v", r)
	}
	if r.CostUSD == nil || *r.CostUSD <= 0 || r.Usage["cache_creation_input_tokens"] == 0 || len(r.Tools) != 1 || r.Tools[0].Name != "Bash" {
		t.Errorf("cost %v usage %v tools %+v", r.CostUSD, r.Usage, r.Tools)
	}
}

// TestE2EHeadlessCodexLiveView: Codex reports no cost; the live view says
// "—", not "$0.0000", and --json says null.
func TestE2EHeadlessCodexLiveView(t *testing.T) {
	srv := testutil.FakeModel(t, "text", fakemodel.Options{})
	a := testutil.Codex(t, srv, "Say pong.")
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--timeout", "2m", "--"}, a.Args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "  pong\n") || !strings.Contains(out, "succeeded · by result · 1 turns · — · ") || strings.Contains(out, "$0.0000") {
		t.Errorf("live view:\n%s", out)
	}
	out, errOut, code = corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--"}, a.Args...)...)
	if code != 0 || !strings.Contains(out, `"cost_usd":null`) || !strings.Contains(out, `"cache_write_input_tokens":40`) {
		t.Errorf("exit %d --json:\n%s\n%s", code, out, errOut)
	}
}

// TestE2EHeadlessAuthFailureExitsAtOnce: a 401 ends the turn as auth, exit
// status 1, long before Claude Code's three minutes of retries.
func TestE2EHeadlessAuthFailureExitsAtOnce(t *testing.T) {
	srv := testutil.FakeModel(t, "auth", fakemodel.Options{})
	a := testutil.Claude(t, srv, "Say pong.")
	began := time.Now()
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--"}, a.Args...)...)
	r := decodeHeadless(t, out)
	if code != 1 || r.ErrorType != "auth" || r.FinalizedBy != "auth" || !strings.Contains(r.Reason, "401") {
		t.Fatalf("exit %d %+v\n%s", code, r, errOut)
	}
	if d := time.Since(began); d > time.Minute {
		t.Errorf("took %v", d)
	}
}

// TestE2EHeadlessSandbox runs Claude Code under --sandbox workspace as
// docs/headless.md's recipe does: the fake model's host allowed, its state
// directory writable. Until corral can build the sandbox here, the command
// must refuse, exit 125 with the reason, and run nothing.
func TestE2EHeadlessSandbox(t *testing.T) {
	ln, err := net.Listen("tcp", testutil.HostAddr()+":0")
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := fakemodel.Named("text", fakemodel.Options{})
	srv := fakemodel.Serve(ln, sc)
	t.Cleanup(func() { srv.Close() })
	base := testutil.OutsideTmp(t)
	a := testutil.Claude(t, srv, "Say pong.")
	state := a.ForSandbox(filepath.Join(base, "home"))
	work := filepath.Join(base, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m",
		"--sandbox", "workspace", "--workdir", work, "--allow-host", ln.Addr().String(), "--writable", state, "--"}, a.Args...)...)
	if code == 125 {
		if !strings.Contains(errOut, "sandbox unavailable") || len(srv.Requests()) != 0 {
			t.Fatalf("refusal without its reason, or the agent ran: %q, %d model requests", errOut, len(srv.Requests()))
		}
		t.Skipf("SKIP: the sandbox cannot be built here yet; corral headless refused as it must: %s", strings.TrimSpace(errOut))
	}
	r := decodeHeadless(t, out)
	if code != 0 || r.Status != "succeeded" || r.Result != fakemodel.Pong || len(r.Process.Sandbox) == 0 {
		t.Fatalf("exit %d %+v\n%s", code, r, errOut)
	}
}

// TestE2EHeadlessCostCeilingStopsTheRealCLIs: the real Claude Code and
// Codex, against the fake model, with a cost ceiling and a price table
// for the fake model's names. Claude Code's turn, which would call a tool
// for ever, is stopped at the message whose priced usage crosses the
// ceiling, within a second of the model's answer; Codex, which reports
// its usage when its turn completes, is recorded max_budget at that
// event. Both keep their cost.
func TestE2EHeadlessCostCeilingStopsTheRealCLIs(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"date":"2026-12-01","source":"test","models":{
		"claude-opus-5-5":{"input":1000,"output":1000,"cache_write":1000,"cache_read":1000},
		"fake-model":{"input":1000,"output":1000,"cache_read":1000}}}`), 0o600)
	for _, cli := range []string{"claude", "codex"} {
		t.Run(cli, func(t *testing.T) {
			srv := testutil.FakeModel(t, "spend", fakemodel.Options{})
			a := testutil.Claude(t, srv, "Spend.")
			if cli == "codex" {
				a = testutil.Codex(t, srv, "Spend.")
			}
			out, errOut, code := corralWith(t, a.Env, append([]string{"headless", "--json", "--timeout", "2m", "--max-cost-usd", "0.5", "--prices", prices, "--"}, a.Args...)...)
			r := decodeHeadless(t, out)
			var full struct {
				Start      time.Time `json:"start"`
				DurationMS float64   `json:"duration_ms"`
				Spend      struct {
					CostUSD float64 `json:"cost_usd"`
					Tokens  int64   `json:"tokens"`
				} `json:"spend"`
			}
			json.Unmarshal([]byte(out), &full)
			if code == 0 || r.ErrorType != "max_budget" || r.CostUSD == nil || *r.CostUSD <= 0.5 || !strings.Contains(r.Reason, "over its ceiling of $0.5000") {
				t.Fatalf("exit %d %s %s $%v: %s\n%s", code, r.Status, r.ErrorType, r.CostUSD, r.Reason, errOut)
			}
			reqs := srv.Requests()
			last := reqs[len(reqs)-1].Time
			ended := full.Start.Add(time.Duration(full.DurationMS * float64(time.Millisecond)))
			t.Logf("%s: $%.4f after %d model requests (%d tokens); ended %v after the last request was answered", cli, *r.CostUSD, len(reqs), full.Spend.Tokens, ended.Sub(last).Round(time.Millisecond))
			if cli == "claude" && ended.Sub(last) > time.Second {
				t.Fatalf("the turn ended %v after the model's last answer, which crossed its ceiling", ended.Sub(last))
			}
		})
	}
}
