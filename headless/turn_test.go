package headless_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/proc"
)

// Bounds for "at once": generous for a loaded 2-core machine. The
// benchmarks measure the real figures.
const (
	promptly = 1500 * time.Millisecond
	longWait = 20 * time.Second
)

// start starts a turn and registers its full teardown as a cleanup.
func start(t *testing.T, ctx context.Context, spec *headless.Spec) *headless.Turn {
	t.Helper()
	turn, err := headless.Start(ctx, spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		turn.Cancel()
		select {
		case <-turn.TornDown():
		case <-time.After(longWait):
			t.Errorf("turn not torn down within %v", longWait)
		}
	})
	return turn
}

// wait waits for the end of the turn, failing after longWait.
func wait(t *testing.T, turn *headless.Turn) *headless.Result {
	t.Helper()
	select {
	case <-turn.Done():
	case <-time.After(longWait):
		t.Fatalf("turn did not end within %v", longWait)
	}
	r, err := turn.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return r
}

// closeTurn waits for the teardown and checks that nothing survived.
func closeTurn(t *testing.T, turn *headless.Turn) *headless.Result {
	t.Helper()
	select {
	case <-turn.TornDown():
	case <-time.After(longWait):
		t.Fatalf("turn not torn down within %v", longWait)
	}
	r, err := turn.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	if r.Process == nil || r.Proc == nil {
		t.Fatalf("Close: no process account")
	}
	if r.Process.Survivors != 0 {
		t.Fatalf("%d processes survived the teardown", r.Process.Survivors)
	}
	return r
}

// costOf reads a result's cost, -1 when none was reported.
func costOf(r *headless.Result) float64 {
	if r.CostUSD == nil {
		return -1
	}
	return *r.CostUSD
}

func expect(t *testing.T, r *headless.Result, status corral.Status, et corral.ErrorType, by headless.FinalizedBy) {
	t.Helper()
	if r.Status != status || r.ErrorType != et || r.FinalizedBy != by {
		b, _ := json.MarshalIndent(r, "", "  ")
		t.Fatalf("got status=%s error_type=%q finalized_by=%s, want %s %q %s\nreason: %s\n%s",
			r.Status, r.ErrorType, r.FinalizedBy, status, et, by, r.Reason, b)
	}
}

func TestTurnSucceedsAndSalvagesTheStream(t *testing.T) {
	spec := agent(t, "success")
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.Text != "There are two files." {
		t.Errorf("result text %q", r.Text)
	}
	if r.SessionID != "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11" || r.Model != "claude-sonnet-4-5" {
		t.Errorf("session %q model %q", r.SessionID, r.Model)
	}
	if r.NumTurns != 2 || costOf(r) != 0.0123 || r.Segments != 1 || r.Format != headless.FormatClaude {
		t.Errorf("num_turns %d cost %v segments %d format %s", r.NumTurns, costOf(r), r.Segments, r.Format)
	}
	if r.Usage == nil || r.Usage.OutputTokens != 450 || r.Usage.CacheReadInputTokens != 4000 {
		t.Errorf("final usage %+v", r.Usage)
	}
	if r.LastCallUsage == nil || r.LastCallUsage.OutputTokens != 30 {
		t.Errorf("last call usage %+v", r.LastCallUsage)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].ID != "toolu_1" || r.Tools[0].Open || r.Tools[0].Detail != "ls" {
		t.Errorf("tools %+v", r.Tools)
	}
	if r.ParseErrors != 0 || r.Events < 6 {
		t.Errorf("parse errors %d events %d", r.ParseErrors, r.Events)
	}
	if r.PermissionMode != "bypassPermissions" {
		t.Errorf("permission mode %q", r.PermissionMode)
	}
	if len(r.ModelUsage) == 0 {
		t.Errorf("model usage lost")
	}
	full := closeTurn(t, turn)
	if full.Status != r.Status || full.Text != r.Text {
		t.Errorf("Close changed the verdict: %s %q", full.Status, full.Text)
	}
	if full.ExitCode != 0 && full.Signal == "" {
		t.Errorf("exit code %d", full.ExitCode)
	}
	// The result is JSON with the documented snake_case names.
	b, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"status", "error_type", "finalized_by", "result", "session_id", "num_turns", "cost_usd", "usage", "exit_code", "duration_ms", "stalled_tool", "parse_errors", "events", "tools"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
}

// readStamp reads the fake agent's wall clock at the final result line.
func readStamp(t *testing.T, path string) time.Time {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("fake agent stamp: %v", err)
	}
	ns, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}

func TestTurnEndsAtResultWhileChildHoldsThePipe(t *testing.T) {
	for _, variant := range []struct {
		name  string
		flags []string
	}{
		{"agent lingers", nil},
		{"agent exits, child ignores SIGTERM", []string{"-exit-after-result", "-child-ignores-term"}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			ts := filepath.Join(t.TempDir(), "ts")
			spec := agent(t, "linger", append([]string{"-ts", ts, "-linger", "10m"}, variant.flags...)...)
			spec.Linger = 200 * time.Millisecond
			turn := start(t, context.Background(), spec)
			r := wait(t, turn)
			returned := time.Now()
			expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
			assertFinalizedPromptly(t, r, readStamp(t, ts))
			// The wall clock, as a backstop only.
			if lag := returned.Sub(readStamp(t, ts)); lag > promptly+longWait/2 {
				t.Errorf("Wait returned %v after the final result", lag)
			}
			select {
			case <-turn.TornDown():
				t.Errorf("the caller waited for the teardown")
			default:
			}
			full := closeTurn(t, turn)
			if full.Process.Killed == 0 {
				t.Errorf("teardown killed nothing; the holder should have been killed")
			}
		})
	}
}

// finalizeBound is the documented bound on ending a turn the agent ended:
// from reading its result line to the result being ready, by corral's
// own clock (headless.Finalization).
const finalizeBound = 100 * time.Millisecond

// assertFinalizedPromptly checks corral's own record of a turn the agent
// ended with a result line it wrote at stamp.
func assertFinalizedPromptly(t *testing.T, r *headless.Result, stamp time.Time) {
	t.Helper()
	f := r.Finalize
	if f == nil {
		t.Fatalf("no finalization record for a turn ended by its result: %+v", r)
	}
	if f.Seen.Before(stamp) || f.At.Before(f.Seen) {
		t.Errorf("result written at %v, read at %v, finalized at %v: out of order", stamp, f.Seen, f.At)
	}
	if wall := f.At.Sub(f.Seen); f.Late+f.Starved != wall {
		t.Errorf("finalized %v after the read; its account (late %v + starved %v) does not add up", wall, f.Late, f.Starved)
	}
	if f.Late > finalizeBound {
		t.Errorf("finalized %v after the result line was read, by corral's own clock (bound %v; %v more was the machine's)", f.Late, finalizeBound, f.Starved)
	}
	t.Logf("finalized %v after the result line by corral's clock (%v withheld by the machine)", f.Late, f.Starved)
}

// TestTurnIsFinalizedWithin100msOfItsResult: the turn is over, and Wait
// returns, within 100 ms of corral reading the final result, by corral's
// own clock, on a loaded machine as on an idle one; the tree is torn down
// after.
func TestTurnIsFinalizedWithin100msOfItsResult(t *testing.T) {
	for i := range 5 {
		ts := filepath.Join(t.TempDir(), "ts")
		spec := agent(t, "linger", "-ts", ts, "-linger", "10m")
		spec.Linger = 50 * time.Millisecond
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
		assertFinalizedPromptly(t, r, readStamp(t, ts))
		full := closeTurn(t, turn)
		if full.Finalize == nil || *full.Finalize != *r.Finalize {
			t.Errorf("turn %d: Close changed the finalization record: %+v", i, full.Finalize)
		}
	}
}

func TestStallWatchdogEndsHungMCPCall(t *testing.T) {
	spec := agent(t, "hung-mcp")
	spec.StallTimeout = 300 * time.Millisecond
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusFailed, corral.ErrorStall, headless.FinalizedByStall)
	st := r.StalledTool
	if st == nil || st.ID != "toolu_mcp" || st.Name != "mcp__slack__post_message" || !st.Open || st.Detail != `{"channel":"#x"}` {
		t.Fatalf("stalled tool %+v", st)
	}
	if st.DurationMS < 300 || st.StallLimitMS != 300 {
		t.Errorf("stalled for %vms with limit %vms", st.DurationMS, st.StallLimitMS)
	}
	if r.SessionID == "" || len(r.Tools) != 1 || !r.Tools[0].Open {
		t.Errorf("salvage lost: session %q tools %+v", r.SessionID, r.Tools)
	}
	closeTurn(t, turn)
}

func TestPerToolLimitOverridesTheMCPDefault(t *testing.T) {
	t.Run("glob tightens", func(t *testing.T) {
		spec := agent(t, "hung-mcp")
		spec.StallTimeout = time.Hour
		spec.ToolLimits = []headless.ToolLimit{{Tool: "mcp__slack__*", Timeout: 250 * time.Millisecond}}
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusFailed, corral.ErrorStall, headless.FinalizedByStall)
		closeTurn(t, turn)
	})
	t.Run("zero exempts", func(t *testing.T) {
		spec := agent(t, "hung-mcp")
		spec.StallTimeout = 200 * time.Millisecond
		spec.ToolLimits = []headless.ToolLimit{{Tool: "mcp__slack__post_message", Timeout: 0}}
		spec.Timeout = 1200 * time.Millisecond
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusFailed, corral.ErrorTimeout, headless.FinalizedByBudget)
		closeTurn(t, turn)
	})
	t.Run("a non-MCP tool by name", func(t *testing.T) {
		spec := agent(t, "hung-mcp", "-tool", "Bash")
		spec.ToolLimits = []headless.ToolLimit{{Tool: "Bash", Timeout: 250 * time.Millisecond}}
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusFailed, corral.ErrorStall, headless.FinalizedByStall)
		if r.StalledTool.Name != "Bash" {
			t.Errorf("stalled %+v", r.StalledTool)
		}
		closeTurn(t, turn)
	})
}

func TestLongToolCallIsNeitherIdleNorStalled(t *testing.T) {
	spec := agent(t, "long-bash", "-wait", "1500ms")
	spec.IdleTimeout = 300 * time.Millisecond
	spec.StallTimeout = 300 * time.Millisecond // MCP only: Bash is not bound by it
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	// The call lasted 1.5 s by the agent's clock; corral times it from when
	// it read each line, which a starved machine may delay for the first:
	// what matters is that it outlasted both limits several times over.
	if len(r.Tools) != 1 || r.Tools[0].DurationMS < 3*300 {
		t.Errorf("tools %+v", r.Tools)
	}
	closeTurn(t, turn)
}

func TestIdleWatchdogFiresWhenNoToolIsOpen(t *testing.T) {
	spec := agent(t, "idle")
	spec.IdleTimeout = 300 * time.Millisecond
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusFailed, corral.ErrorIdle, headless.FinalizedByIdle)
	if r.Text != "Let me think." {
		t.Errorf("last text %q", r.Text)
	}
	closeTurn(t, turn)
}

func TestBudgetIsTheBackstop(t *testing.T) {
	spec := agent(t, "budget")
	spec.Timeout = 2 * time.Second
	// Never reached: the agent talks every 50 ms. (Generous: on a machine
	// with both cores busy the agent once went 300 ms without a turn.)
	spec.IdleTimeout = time.Second
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusFailed, corral.ErrorTimeout, headless.FinalizedByBudget)
	if r.Duration < spec.Timeout || r.Duration > spec.Timeout+promptly {
		t.Errorf("budget of %v ended the turn after %v", spec.Timeout, r.Duration)
	}
	closeTurn(t, turn)
}

func TestResultWithLiveBackgroundTaskIsOnlyASegment(t *testing.T) {
	spec := agent(t, "fanout", "-wait", "1s")
	spec.IdleTimeout = 300 * time.Millisecond // suspended while the subagent is live
	var mu sync.Mutex
	var results []headless.Event
	var bg []int
	spec.OnEvent = func(e headless.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case headless.KindResult:
			results = append(results, e)
		case headless.KindBackground:
			bg = append(bg, e.Background)
		}
	}
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.Text != "The agent found 3 leads." || r.Segments != 2 || r.NumTurns != 4 || costOf(r) != 0.07 {
		t.Errorf("text %q segments %d turns %d cost %v", r.Text, r.Segments, r.NumTurns, costOf(r))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || results[0].Final || !results[1].Final {
		t.Errorf("result events %+v", results)
	}
	// Ambient tasks do not count; a background shell does, as Claude Code
	// waits for it too.
	if len(bg) != 2 || bg[0] != 2 || bg[1] != 0 {
		t.Errorf("background set sizes %v, want [2 0]", bg)
	}
	closeTurn(t, turn)
}

func TestSegmentThenExitKeepsTheAgentsLastWord(t *testing.T) {
	turn := start(t, context.Background(), agent(t, "segment-then-exit"))
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByExit)
	if r.Text != "Waiting for the agent." {
		t.Errorf("text %q", r.Text)
	}
	closeTurn(t, turn)
}

func TestAuthFailureAbortsAtOnce(t *testing.T) {
	for _, sc := range []string{"auth-stderr", "auth-stream"} {
		t.Run(sc, func(t *testing.T) {
			spec := agent(t, sc)
			began := time.Now()
			turn := start(t, context.Background(), spec)
			r := wait(t, turn)
			expect(t, r, corral.StatusFailed, corral.ErrorAuth, headless.FinalizedByAuth)
			if d := time.Since(began); d > promptly+time.Second {
				t.Errorf("auth failure took %v to end the turn", d)
			}
			if !strings.Contains(r.Reason, "authentication") {
				t.Errorf("reason %q", r.Reason)
			}
			if r.SessionID == "" {
				t.Errorf("session id lost")
			}
			closeTurn(t, turn)
		})
	}
}

func TestResultClassification(t *testing.T) {
	for _, c := range []struct {
		scenario string
		et       corral.ErrorType
		by       headless.FinalizedBy
	}{
		{"max-turns", corral.ErrorMaxTurns, headless.FinalizedByResult},
		{"max-budget", corral.ErrorMaxBudget, headless.FinalizedByResult},
		{"rate-limit", corral.ErrorRateLimit, headless.FinalizedByResult},
		{"rate-limit-exit", corral.ErrorRateLimit, headless.FinalizedByExit},
		{"model", corral.ErrorModelUnsupported, headless.FinalizedByResult},
		{"is-error", corral.ErrorStream, headless.FinalizedByResult},
		{"no-result", corral.ErrorEmptyResult, headless.FinalizedByExit},
		{"not-json", corral.ErrorStream, headless.FinalizedByExit},
		{"crash", corral.ErrorCrash, headless.FinalizedByExit},
		{"self-kill", corral.ErrorSignal, headless.FinalizedByExit},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			turn := start(t, context.Background(), agent(t, c.scenario))
			r := wait(t, turn)
			expect(t, r, corral.StatusFailed, c.et, c.by)
			if r.Reason == "" {
				t.Errorf("no reason given")
			}
			switch c.scenario {
			case "max-turns":
				if r.NumTurns != 3 || costOf(r) != 0.31 || len(r.AgentErrors) == 0 {
					t.Errorf("salvage: turns %d cost %v errors %v", r.NumTurns, costOf(r), r.AgentErrors)
				}
			case "crash":
				if !strings.Contains(r.Reason, "exited 3") || !strings.Contains(r.StderrTail, "TypeError") {
					t.Errorf("reason %q stderr %q", r.Reason, r.StderrTail)
				}
			case "self-kill":
				if r.Signal != "SIGKILL" {
					t.Errorf("signal %q", r.Signal)
				}
			}
			closeTurn(t, turn)
		})
	}
}

func TestGarbageLinesAreCountedNotFatal(t *testing.T) {
	spec := agent(t, "garbage", "-huge", strconv.Itoa(12<<20))
	spec.MaxLine = 4 << 20
	var invalid atomic.Int64
	spec.OnEvent = func(e headless.Event) {
		if e.Kind == headless.KindInvalid {
			invalid.Add(1)
		}
	}
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.ParseErrors != 2 || invalid.Load() != 2 {
		t.Errorf("parse errors %d (events %d), want 2", r.ParseErrors, invalid.Load())
	}
	if !strings.Contains(r.ParseErrorSample, "Warning: something printed") {
		t.Errorf("sample %q", r.ParseErrorSample)
	}
	if r.LinesCut != 1 || r.BytesCut < 8<<20 {
		t.Errorf("lines cut %d bytes cut %d", r.LinesCut, r.BytesCut)
	}
	// The huge line was read up to the cut: its tool result closed the call.
	if len(r.Tools) != 1 || r.Tools[0].Open {
		t.Errorf("tools %+v", r.Tools)
	}
	if r.Text != "Survived the garbage." {
		t.Errorf("text %q", r.Text)
	}
	closeTurn(t, turn)
}

func TestFinalResultWithoutNewlineIsRead(t *testing.T) {
	turn := start(t, context.Background(), agent(t, "no-newline"))
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.Text != "no newline at the end" {
		t.Errorf("text %q", r.Text)
	}
	closeTurn(t, turn)
}

func TestPermissionModeIsCheckedOnInit(t *testing.T) {
	t.Run("mismatch aborts", func(t *testing.T) {
		spec := agent(t, "permission", "-perm", "default", "-delay", "200ms")
		spec.RequirePermissionMode = "bypassPermissions"
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusFailed, corral.ErrorPermissionMode, headless.FinalizedByPermissionMode)
		if len(r.Tools) != 0 {
			t.Errorf("turn went on after the init line: tools %+v", r.Tools)
		}
		if r.PermissionMode != "default" || !strings.Contains(r.Reason, "bypassPermissions") {
			t.Errorf("mode %q reason %q", r.PermissionMode, r.Reason)
		}
		closeTurn(t, turn)
	})
	t.Run("match runs", func(t *testing.T) {
		spec := agent(t, "permission")
		spec.RequirePermissionMode = "bypassPermissions"
		turn := start(t, context.Background(), spec)
		r := wait(t, turn)
		expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
		closeTurn(t, turn)
	})
}

// awaitTool waits for the channel of afterToolUse, failing after longWait.
func awaitTool(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(longWait):
		t.Fatalf("the agent never called its tool within %v", longWait)
	}
}

// afterToolUse returns a spec hook that closes the channel at the first
// tool call.
func afterToolUse(spec *headless.Spec) <-chan struct{} {
	ch := make(chan struct{})
	var once sync.Once
	spec.OnEvent = func(e headless.Event) {
		if e.Kind == headless.KindToolUse {
			once.Do(func() { close(ch) })
		}
	}
	return ch
}

// cancelledInItsTool starts a turn of spec, cancels it once the agent is
// in its tool call, and returns it with its result, which says cancelled.
func cancelledInItsTool(t *testing.T, spec *headless.Spec) (*headless.Turn, *headless.Result) {
	t.Helper()
	started := afterToolUse(spec)
	turn := start(t, context.Background(), spec)
	awaitTool(t, started)
	turn.Cancel()
	r := wait(t, turn)
	expect(t, r, corral.StatusCancelled, corral.ErrorCancelled, headless.FinalizedByCancel)
	return turn, r
}

func TestCancelInterruptsTheAgentFirst(t *testing.T) {
	spec := agent(t, "cancel")
	spec.InterruptGrace = 5 * time.Second
	turn, r := cancelledInItsTool(t, spec)
	// The agent saw SIGINT and finished its step: its result was salvaged.
	if costOf(r) != 0.033 || r.Subtype != "error_during_execution" {
		t.Errorf("salvage after SIGINT: cost %v subtype %q", costOf(r), r.Subtype)
	}
	full := closeTurn(t, turn)
	if full.ExitCode != 130 {
		t.Errorf("exit code %d (signal %s), want the agent's own 130", full.ExitCode, full.Signal)
	}
}

// TestCancelLetsTheAgentExitWithinTheInterruptGrace: an agent that
// answers SIGINT with its result and takes a moment more to exit (Claude
// Code saves its session on the way out) exits by itself, with its own
// status, within the interrupt grace: the turn ends at its result, and
// the tree is stopped only if it is still there when the grace is over.
func TestCancelLetsTheAgentExitWithinTheInterruptGrace(t *testing.T) {
	const exitDelay = 300 * time.Millisecond
	spec := agent(t, "cancel", "-exit-delay", exitDelay.String())
	spec.InterruptGrace = 10 * time.Second
	turn, _ := cancelledInItsTool(t, spec)
	full := closeTurn(t, turn)
	if full.ExitCode != 130 || full.Signal != "" {
		t.Errorf("exit code %d (signal %q), want the agent's own 130 after its %v on the way out", full.ExitCode, full.Signal, exitDelay)
	}
}

func TestCancelEscalatesWhenSIGINTIsIgnored(t *testing.T) {
	spec := agent(t, "cancel", "-ignore-int")
	spec.InterruptGrace = 300 * time.Millisecond
	started := afterToolUse(spec)
	turn := start(t, context.Background(), spec)
	awaitTool(t, started)
	asked := time.Now()
	turn.Cancel()
	r := wait(t, turn)
	expect(t, r, corral.StatusCancelled, corral.ErrorCancelled, headless.FinalizedByCancel)
	if d := time.Since(asked); d < 300*time.Millisecond || d > 300*time.Millisecond+promptly {
		t.Errorf("cancel took %v with an interrupt grace of 300ms", d)
	}
	full := closeTurn(t, turn)
	if full.Signal != "SIGTERM" && full.Signal != "SIGKILL" {
		t.Errorf("agent ended by %q exit %d, want the core's escalation; %+v %s", full.Signal, full.ExitCode, full.Process, full.StderrTail)
	}
}

func TestContextCancellationCancelsTheTurn(t *testing.T) {
	spec := agent(t, "cancel")
	started := afterToolUse(spec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	turn := start(t, ctx, spec)
	awaitTool(t, started)
	cancel()
	r := wait(t, turn)
	expect(t, r, corral.StatusCancelled, corral.ErrorCancelled, headless.FinalizedByCancel)
	closeTurn(t, turn)
}

func TestCodexTurns(t *testing.T) {
	t.Run("completed", func(t *testing.T) {
		turn := start(t, context.Background(), agent(t, "codex", "-linger", "10m"))
		r := wait(t, turn)
		expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
		if r.Format != headless.FormatCodex || r.SessionID != "0199a213-81c0-7800-8aa1-bbab2a035a53" {
			t.Errorf("format %s session %q", r.Format, r.SessionID)
		}
		if r.Text != "One file: a.txt." || r.NumTurns != 1 {
			t.Errorf("text %q turns %d", r.Text, r.NumTurns)
		}
		if r.Usage == nil || r.Usage.CachedInputTokens != 24448 || r.Usage.ReasoningOutputTokens != 64 {
			t.Errorf("usage %+v", r.Usage)
		}
		if len(r.Tools) != 2 || r.Tools[0].Name != "command_execution" || r.Tools[0].Open || r.Tools[1].Name != "file_change" {
			t.Errorf("tools %+v", r.Tools)
		}
		closeTurn(t, turn)
	})
	for _, c := range []struct {
		scenario string
		et       corral.ErrorType
		by       headless.FinalizedBy
	}{
		{"codex-failed", corral.ErrorQuota, headless.FinalizedByResult},
		{"codex-auth", corral.ErrorAuth, headless.FinalizedByResult},
		{"codex-hung-mcp", corral.ErrorStall, headless.FinalizedByStall},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			spec := agent(t, c.scenario)
			spec.Format = headless.FormatCodex
			spec.StallTimeout = 300 * time.Millisecond
			turn := start(t, context.Background(), spec)
			r := wait(t, turn)
			expect(t, r, corral.StatusFailed, c.et, c.by)
			if c.scenario == "codex-hung-mcp" && (r.StalledTool == nil || r.StalledTool.Name != "mcp__jira__search") {
				t.Errorf("stalled %+v", r.StalledTool)
			}
			closeTurn(t, turn)
		})
	}
}

func TestTranscriptIsWrittenBoundedAndRedacted(t *testing.T) {
	const secret = "sk-ant-api03-SECRETSECRETSECRETSECRET"
	path := filepath.Join(t.TempDir(), "turn.jsonl")
	spec := agent(t, "success", "-echo-env", "ANTHROPIC_API_KEY")
	spec.Env = append(spec.Env, "ANTHROPIC_API_KEY="+secret)
	spec.TranscriptPath = path
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if r.TranscriptPath != path {
		t.Errorf("transcript path %q", r.TranscriptPath)
	}
	closeTurn(t, turn)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || strings.Contains(string(b), "ghp_abcdefghijklmnop") {
		t.Fatalf("transcript leaks a secret:\n%s", b)
	}
	if !strings.Contains(string(b), "[REDACTED]") || !strings.Contains(string(b), `"type":"result"`) {
		t.Fatalf("transcript incomplete:\n%s", b)
	}
	// The answer, which the Result stores and prints, is redacted alike.
	if strings.Contains(r.Text, secret) || !strings.Contains(r.Text, "[REDACTED]") {
		t.Errorf("result text %q", r.Text)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode %v", fi.Mode())
	}

	t.Run("private key", func(t *testing.T) {
		// A key the agent read from a file reaches the stream as one JSON
		// string with its line breaks escaped: all of it goes, body
		// included, and the transcript stays JSON lines.
		const body = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"
		path := filepath.Join(t.TempDir(), "key.jsonl")
		spec := agent(t, "success", "-echo-env", "SETUP_NOTES")
		spec.Env = append(spec.Env, "SETUP_NOTES=-----BEGIN RSA PRIVATE KEY-----\n"+body+"\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==\n-----END RSA PRIVATE KEY-----\n")
		spec.TranscriptPath = path
		turn := start(t, context.Background(), spec)
		expect(t, wait(t, turn), corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
		closeTurn(t, turn)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), body) || strings.Contains(string(b), "PRIVATE KEY") {
			t.Fatalf("transcript leaks the key:\n%s", b)
		}
		if !strings.Contains(string(b), `The key is [REDACTED]\n and a token [REDACTED].`) {
			t.Fatalf("key not masked as one:\n%s", b)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("redaction broke a JSON line: %s", line)
			}
		}
	})

	t.Run("bounded", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "small.jsonl")
		spec := agent(t, "success")
		spec.TranscriptPath = path
		spec.MaxTranscript = 1000
		turn := start(t, context.Background(), spec)
		wait(t, turn)
		full := closeTurn(t, turn)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1200 || !full.TranscriptTruncated {
			t.Errorf("transcript of %d bytes, truncated=%v, with a bound of 1000", fi.Size(), full.TranscriptTruncated)
		}
	})
}

func TestEventsArePublishedInOrderAndNeverAfterWait(t *testing.T) {
	spec := agent(t, "fanout", "-wait", "200ms", "-linger", "10m")
	var ended atomic.Bool
	var late atomic.Int64
	var last atomic.Int64
	var disorder atomic.Int64
	spec.OnEvent = func(e headless.Event) {
		if ended.Load() {
			late.Add(1)
		}
		if e.Seq != last.Load()+1 {
			disorder.Add(1)
		}
		last.Store(e.Seq)
	}
	turn := start(t, context.Background(), spec)
	sub := turn.Subscribe(1000)
	tiny := turn.Subscribe(1)
	r := wait(t, turn)
	ended.Store(true)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	if disorder.Load() != 0 || last.Load() != r.Events {
		t.Errorf("events out of order (%d) or missing: last seq %d of %d", disorder.Load(), last.Load(), r.Events)
	}
	var got []headless.Event
	for e := range sub.C { // closed at the end of the turn
		got = append(got, e)
	}
	if len(got) == 0 || got[len(got)-1].Kind != headless.KindResult || !got[len(got)-1].Final {
		t.Errorf("subscription did not end with the final result: %d events", len(got))
	}
	n := 0
	for range tiny.C {
		n++
	}
	if tiny.Dropped() == 0 || int64(n)+tiny.Dropped() != int64(len(got)) || r.EventsDropped != tiny.Dropped() {
		t.Errorf("tiny subscriber got %d, dropped %d of %d (result says %d)", n, tiny.Dropped(), len(got), r.EventsDropped)
	}
	closeTurn(t, turn)
	if late.Load() != 0 {
		t.Errorf("%d events published after Wait returned", late.Load())
	}
}

func TestOnStartGetsTheHandleForRecovery(t *testing.T) {
	spec := agent(t, "success")
	var h proc.Handle
	spec.OnStart = func(x proc.Handle) { h = x }
	turn := start(t, context.Background(), spec)
	if h.Pid == 0 || h.Containment == "" || h != turn.Handle() {
		t.Errorf("handle %+v", h)
	}
	wait(t, turn)
	closeTurn(t, turn)
}

func TestRunReturnsAtTheEndOfTheTurn(t *testing.T) {
	spec := agent(t, "linger", "-linger", "10m")
	r, err := headless.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	select {
	case <-r.Teardown:
	case <-time.After(longWait):
		t.Fatal("teardown never completed")
	}
}

func TestStartRejectsBadInput(t *testing.T) {
	fakeAgent := fakeAgentPath(t)
	_, err := headless.Start(context.Background(), &headless.Spec{Args: []string{"no-such-agent-binary-xyz"}})
	if !errors.Is(err, proc.ErrNotFound) {
		t.Errorf("missing binary: %v", err)
	}
	for _, spec := range []*headless.Spec{
		nil,
		{},
		{Args: []string{""}},
		{Args: []string{fakeAgent}, Format: "yaml"},
		{Args: []string{fakeAgent}, Format: headless.FormatCodex, RequirePermissionMode: "bypassPermissions"},
		{Args: []string{fakeAgent}, ToolLimits: []headless.ToolLimit{{Tool: "[", Timeout: time.Second}}},
		{Args: []string{fakeAgent}, TranscriptPath: filepath.Join(t.TempDir(), "no", "such", "dir", "t.jsonl")},
	} {
		if _, err := headless.Start(context.Background(), spec); err == nil {
			t.Errorf("Start(%+v) succeeded", spec)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := headless.Start(ctx, &headless.Spec{Args: []string{fakeAgent, "success"}}); err == nil {
		t.Errorf("Start with a done context succeeded")
	}
}

// TestBackgroundTimeoutEndsATurnWaitingForADevServer: Claude Code waits for
// a shell command it ran in the background; one that never ends (a dev
// server) holds the turn only until the background timeout, which is
// reported, and the agent's answer stands.
func TestBackgroundTimeoutEndsATurnWaitingForADevServer(t *testing.T) {
	spec := agent(t, "dev-server")
	spec.BackgroundTimeout = time.Second
	spec.IdleTimeout = time.Hour
	began := time.Now()
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByBackground)
	if el := time.Since(began); el < time.Second {
		t.Errorf("ended after %v, before the background timeout", el)
	}
	if r.Text != "The dev server is running on port 3000." || len(r.BackgroundTasks) != 1 || r.BackgroundTasks[0].ID != "bdev1" || r.BackgroundTasks[0].Type != "local_bash" {
		t.Errorf("text %q background tasks %+v", r.Text, r.BackgroundTasks)
	}
	if !strings.Contains(r.Reason, "still live 1s after the agent's last result") || !strings.Contains(r.Reason, "Start the dev server") {
		t.Errorf("reason %q", r.Reason)
	}
	closeTurn(t, turn)
}
