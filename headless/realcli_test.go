package headless_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// The real Claude Code and Codex CLIs (the pinned npm installs; skipped
// loudly without them) against internal/fakemodel: what "Done when" of the
// real-CLI work asks, measured on the real streams.

// realSpec runs a real agent in a clean environment of its own, its
// processes tagged; the test fails if any survives it.
func realSpec(t *testing.T, a testutil.RealAgent) *headless.Spec {
	t.Helper()
	tag := testutil.Tag(t)
	testutil.CheckFDs(t)
	t.Cleanup(func() {
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		testutil.AssertNoZombies(t, 5*time.Second)
	})
	return &headless.Spec{
		Args:    a.Args,
		EnvMode: corral.EnvClean,
		Env:     append(a.Env, testutil.TagEnvVar(tag)),
		Grace:   time.Second,
		Timeout: 2 * time.Minute,
	}
}

// events records the turn's events.
type events struct {
	mu  sync.Mutex
	evs []headless.Event
}

func (e *events) add(ev headless.Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

// first returns the first event of a kind.
func (e *events) first(k headless.Kind) (headless.Event, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range e.evs {
		if ev.Kind == k {
			return ev, true
		}
	}
	return headless.Event{}, false
}

// runReal runs the turn to its end and through its teardown.
func runReal(t *testing.T, spec *headless.Spec) (*headless.Result, *events) {
	t.Helper()
	evs := &events{}
	spec.OnEvent = evs.add
	turn := start(t, context.Background(), spec)
	select {
	case <-turn.Done():
	case <-time.After(3 * time.Minute):
		t.Fatal("the real turn did not end within 3 minutes")
	}
	r, _ := turn.Wait()
	closeTurn(t, turn)
	return r, evs
}

// end is when the turn ended.
func end(r *headless.Result) time.Time { return r.Start.Add(r.Duration) }

func TestRealClaudeAnswersAndKeepsUsage(t *testing.T) {
	srv := testutil.FakeModel(t, "tool", fakemodel.Options{})
	r, _ := runReal(t, realSpec(t, testutil.Claude(t, srv, "Run the command.")))
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if !strings.HasPrefix(r.Text, fakemodel.FinalPrefix+fakemodel.ToolMarker) || len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Open {
		t.Errorf("text %q tools %+v", r.Text, r.Tools)
	}
	if r.CostUSD == nil || *r.CostUSD <= 0 || r.Usage == nil || r.Usage.CacheCreationInputTokens != 2*fakemodel.DefaultUsage.CacheWrite || r.Usage.CacheReadInputTokens != 2*fakemodel.DefaultUsage.CacheRead {
		t.Errorf("cost %v usage %+v", r.CostUSD, r.Usage)
	}
}

func TestRealCodexAnswersWithoutACost(t *testing.T) {
	srv := testutil.FakeModel(t, "tool", fakemodel.Options{})
	r, _ := runReal(t, realSpec(t, testutil.Codex(t, srv, "Run the command.")))
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if !strings.Contains(r.Text, fakemodel.ToolMarker) || len(r.Tools) != 1 || r.Tools[0].Name != "command_execution" {
		t.Errorf("text %q tools %+v", r.Text, r.Tools)
	}
	// Codex reports no cost: null, not 0. It does report cache writes.
	if r.CostUSD != nil || r.Usage == nil || r.Usage.CacheWriteInputTokens != 2*fakemodel.DefaultUsage.CacheWrite {
		t.Errorf("cost %v usage %+v", r.CostUSD, r.Usage)
	}
}

// TestRealClaudeAuthFailureEndsWithinTwoSeconds: Claude Code retries a 401
// for about three minutes; the turn ends as auth within 2 s of its first
// api_retry line.
func TestRealClaudeAuthFailureEndsWithinTwoSeconds(t *testing.T) {
	srv := testutil.FakeModel(t, "auth", fakemodel.Options{})
	r, evs := runReal(t, realSpec(t, testutil.Claude(t, srv, "Say pong.")))
	expect(t, r, corral.StatusFailed, corral.ErrorAuth, headless.FinalizedByAuth)
	retry, ok := evs.first(headless.KindRetry)
	if !ok || retry.ErrorStatus != 401 || retry.Error != "authentication_failed" {
		t.Fatalf("no api_retry 401 event: %+v", retry)
	}
	if d := end(r).Sub(retry.Time); d > 2*time.Second {
		t.Errorf("ended %v after the first api_retry line", d)
	}
	if !strings.Contains(r.Reason, "401 authentication_failed") {
		t.Errorf("reason %q", r.Reason)
	}
}

// TestRealCodexAuthFailureEndsWithinTwoSeconds: Codex prints an error line
// at each of its retries of a 401; the turn ends as auth within 2 s of the
// first.
func TestRealCodexAuthFailureEndsWithinTwoSeconds(t *testing.T) {
	srv := testutil.FakeModel(t, "auth", fakemodel.Options{})
	r, evs := runReal(t, realSpec(t, testutil.Codex(t, srv, "Say pong.")))
	expect(t, r, corral.StatusFailed, corral.ErrorAuth, headless.FinalizedByAuth)
	retry, ok := evs.first(headless.KindRetry)
	if !ok || !strings.Contains(retry.Error, "401 Unauthorized") || retry.Attempt != 1 {
		t.Fatalf("no first retry event: %+v", retry)
	}
	if d := end(r).Sub(retry.Time); d > 2*time.Second {
		t.Errorf("ended %v after the first error line", d)
	}
}

// TestRealCodexMissingKeyIsAuth: the provider's key variable unset.
func TestRealCodexMissingKeyIsAuth(t *testing.T) {
	srv := testutil.FakeModel(t, "text", fakemodel.Options{})
	a := testutil.Codex(t, srv, "Say pong.")
	var env []string
	for _, kv := range a.Env {
		if !strings.HasPrefix(kv, fakemodel.CodexKeyVar+"=") {
			env = append(env, kv)
		}
	}
	a.Env = env
	r, _ := runReal(t, realSpec(t, a))
	expect(t, r, corral.StatusFailed, corral.ErrorAuth, headless.FinalizedByAuth)
	if !strings.Contains(r.Reason, "Missing environment variable") {
		t.Errorf("reason %q", r.Reason)
	}
}

// TestRealQuotaIsNotARateLimit: an exhausted account is quota for both.
func TestRealQuotaIsNotARateLimit(t *testing.T) {
	for name, agent := range map[string]func(testing.TB, *fakemodel.Server, string, ...string) testutil.RealAgent{"claude": testutil.Claude, "codex": testutil.Codex} {
		t.Run(name, func(t *testing.T) {
			srv := testutil.FakeModel(t, "quota", fakemodel.Options{})
			r, _ := runReal(t, realSpec(t, agent(t, srv, "Say pong.")))
			expect(t, r, corral.StatusFailed, corral.ErrorQuota, headless.FinalizedByResult)
		})
	}
}

// TestRealRateLimitDecidesTheBudgetsErrorType: the budget runs out while
// Claude Code retries 429s: the turn is rate_limit, and says so. The
// budget leaves the CLI 15 s to start and meet its first 429 (6 s was once
// too little on a loaded machine: the budget ran out before the CLI's
// first request, a timeout), and 3 s between retries keeps its ten
// retries going past the budget however fast it starts.
func TestRealRateLimitDecidesTheBudgetsErrorType(t *testing.T) {
	srv := testutil.FakeModel(t, "rate_limit", fakemodel.Options{RetryAfter: 3 * time.Second})
	spec := realSpec(t, testutil.Claude(t, srv, "Say pong."))
	spec.Timeout = 15 * time.Second
	r, _ := runReal(t, spec)
	expect(t, r, corral.StatusFailed, corral.ErrorRateLimit, headless.FinalizedByBudget)
	if f := r.APIFailure; f == nil || f.Status != 429 || f.Error != "rate_limit" || f.Attempt == 0 {
		t.Errorf("api failure %+v", f)
	}
	if !strings.Contains(r.Reason, "budget ran out while the agent was retrying") {
		t.Errorf("reason %q", r.Reason)
	}
}

// TestRealClaudeHangIsIdle: a model stream that stops mid-way leaves Claude
// Code silent, with no tool call open.
func TestRealClaudeHangIsIdle(t *testing.T) {
	srv := testutil.FakeModel(t, "hang", fakemodel.Options{})
	spec := realSpec(t, testutil.Claude(t, srv, "Say pong."))
	spec.IdleTimeout = 8 * time.Second
	r, _ := runReal(t, spec)
	expect(t, r, corral.StatusFailed, corral.ErrorIdle, headless.FinalizedByIdle)
}

// TestRealClaudeBackgroundBashIsWaitedFor: Claude Code answers while a
// command it started in the background runs, and answers again when it
// finishes: the second answer is the turn's.
func TestRealClaudeBackgroundBashIsWaitedFor(t *testing.T) {
	srv := testutil.FakeModel(t, "background", fakemodel.Options{Wait: 40 * time.Second})
	spec := realSpec(t, testutil.Claude(t, srv, "Start the job."))
	// Silent while the job runs, longer than the idle limit: not idle. The
	// limit also bounds the CLI's start before its first line, which took
	// more than 8 s with both cores busy, and more than 15 s once in a full
	// suite beside two busy loops.
	spec.IdleTimeout = 30 * time.Second
	r, evs := runReal(t, spec)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.Text != fakemodel.BackgroundFinal || r.Segments != 2 {
		t.Errorf("text %q segments %d", r.Text, r.Segments)
	}
	if bg, ok := evs.first(headless.KindBackground); !ok || bg.Background != 1 {
		t.Errorf("background event %+v", bg)
	}
}

// TestRealClaudeBackgroundTimeoutStopsADevServer: a background command
// that never ends holds the turn until the background timeout, which is
// reported; the command dies with the tree.
func TestRealClaudeBackgroundTimeoutStopsADevServer(t *testing.T) {
	srv := testutil.FakeModel(t, "background", fakemodel.Options{Wait: 10 * time.Minute})
	spec := realSpec(t, testutil.Claude(t, srv, "Start the server."))
	spec.BackgroundTimeout = 3 * time.Second
	r, _ := runReal(t, spec)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByBackground)
	if len(r.BackgroundTasks) != 1 || r.BackgroundTasks[0].Type != "local_bash" || !strings.Contains(r.Reason, "still live 3s after") {
		t.Errorf("background tasks %+v, reason %q", r.BackgroundTasks, r.Reason)
	}
	if !strings.HasPrefix(r.Text, "Started it in the background") {
		t.Errorf("text %q", r.Text)
	}
}

// TestRealClaudeBackgroundSubagentIsWaitedFor: a sub-agent in the
// background, whose results Claude Code reports together at the end.
func TestRealClaudeBackgroundSubagentIsWaitedFor(t *testing.T) {
	srv := testutil.FakeModel(t, "subagent", fakemodel.Options{Wait: 20 * time.Second})
	spec := realSpec(t, testutil.Claude(t, srv, "Delegate the task."))
	spec.IdleTimeout = 15 * time.Second // see TestRealClaudeBackgroundBashIsWaitedFor
	r, _ := runReal(t, spec)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.Segments != 2 || !strings.HasPrefix(r.Text, fakemodel.FinalPrefix) || len(r.Tools) == 0 || r.Tools[0].Name != "Agent" {
		t.Errorf("segments %d text %q tools %+v", r.Segments, r.Text, r.Tools)
	}
}

// TestRealCodexYieldedCommandDoesNotHoldIdle: Codex hands a command that
// outlives its yield back to the model, whose stream then hangs; the
// command's item stays open, but the idle watchdog fires anyway.
func TestRealCodexYieldedCommandDoesNotHoldIdle(t *testing.T) {
	srv := testutil.FakeModel(t, "yield", fakemodel.Options{Wait: 2 * time.Minute})
	spec := realSpec(t, testutil.Codex(t, srv, "Run the command."))
	spec.CommandYield = 2 * time.Second
	spec.IdleTimeout = 15 * time.Second // the CLI's start counts too: see TestRealClaudeBackgroundBashIsWaitedFor
	r, evs := runReal(t, spec)
	expect(t, r, corral.StatusFailed, corral.ErrorIdle, headless.FinalizedByIdle)
	use, ok := evs.first(headless.KindToolUse)
	if !ok || use.ToolName != "command_execution" || len(r.Tools) != 1 || !r.Tools[0].Open {
		t.Fatalf("tool %+v, timeline %+v", use, r.Tools)
	}
	if d := end(r).Sub(use.Time); d > 40*time.Second {
		t.Errorf("idle fired %v after the command started", d)
	}
}

// TestRealCodexSubagentWaitIsNotIdle: a sub-agent working longer than the
// idle limit, waited for with wait_agent, is a tool call in the timeline
// and holds the idle watchdog off.
func TestRealCodexSubagentWaitIsNotIdle(t *testing.T) {
	srv := testutil.FakeModel(t, "subagent", fakemodel.Options{Wait: 20 * time.Second})
	spec := realSpec(t, testutil.Codex(t, srv, "Delegate the task."))
	spec.IdleTimeout = 15 * time.Second // see TestRealClaudeBackgroundBashIsWaitedFor
	r, _ := runReal(t, spec)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if !strings.Contains(r.Text, fakemodel.SubagentAnswer) || len(r.Tools) != 2 {
		t.Fatalf("text %q tools %+v", r.Text, r.Tools)
	}
	wait := r.Tools[1]
	if wait.Name != "collab_tool_call" || !strings.HasPrefix(wait.Detail, "wait ") || wait.Open || wait.Duration() < 16*time.Second {
		t.Errorf("wait call %+v", wait)
	}
}

// TestRealAgentsUnderASandbox runs each real CLI confined (--sandbox
// workspace, no network but the fake model's host through corral's proxy,
// its state directory writable), as docs/headless.md's recipes do. It
// skips, loudly, while corral cannot build the sandbox on this machine.
func TestRealAgentsUnderASandbox(t *testing.T) {
	for name, agent := range map[string]func(testing.TB, *fakemodel.Server, string, ...string) testutil.RealAgent{"claude": testutil.Claude, "codex": testutil.Codex} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", testutil.HostAddr()+":0")
			if err != nil {
				t.Fatal(err)
			}
			sc, _ := fakemodel.Named("tool", fakemodel.Options{})
			srv := fakemodel.Serve(ln, sc)
			t.Cleanup(func() { srv.Close() })

			base := testutil.OutsideTmp(t)
			a := agent(t, srv, "Run the command.")
			state := a.ForSandbox(filepath.Join(base, "home"))
			work := filepath.Join(base, "work")
			if err := os.MkdirAll(work, 0o700); err != nil {
				t.Fatal(err)
			}
			spec := realSpec(t, a)
			spec.Dir = work
			spec.Sandbox = corral.Sandbox{
				Mode:       corral.SandboxWorkspace,
				Writable:   []string{state},
				AllowHosts: []string{ln.Addr().String()},
			}
			turn, err := headless.Start(context.Background(), spec)
			if errors.Is(err, proc.ErrSandboxUnavailable) {
				t.Skipf("SKIP: corral cannot build the sandbox here yet: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { turn.Cancel(); <-turn.TornDown() })
			select {
			case <-turn.Done():
			case <-time.After(3 * time.Minute):
				t.Fatal("the sandboxed turn did not end within 3 minutes")
			}
			r := closeTurn(t, turn)
			expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
			if !strings.Contains(r.Text, fakemodel.ToolMarker) || r.Process.Sandbox == nil || r.Process.Sandbox.Mode != corral.SandboxWorkspace {
				t.Errorf("text %q sandbox %+v", r.Text, r.Process.Sandbox)
			}
			if len(srv.Requests()) < 2 {
				t.Errorf("the model saw %d requests: the agent did not reach it through the proxy", len(srv.Requests()))
			}
		})
	}
}
