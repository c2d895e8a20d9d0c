package headless

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
)

// The streams under testdata/streams are what the real CLIs printed (Claude
// Code 2.1.328, Codex 0.169.0) against internal/fakemodel, one file per
// scenario, paths and ports made neutral. These tests read them without a
// process, so they run everywhere and fast; the end-to-end tests run the
// CLIs themselves.

// replay feeds a recorded stream to a ledger, line by line up to and
// including line upTo (all of it when upTo is 0).
func replay(t *testing.T, spec *Spec, name string, upTo int) *Turn {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "streams", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if upTo > 0 {
		lines := bytes.SplitAfter(data, []byte("\n"))
		data = bytes.Join(lines[:min(upTo, len(lines))], nil)
	}
	l := ledger(spec)
	l.feed(data, 4096)
	return l
}

// verdict is how the turn would end if what ended it was by.
func verdict(l *Turn, by FinalizedBy) (*Result, corral.Status, corral.ErrorType, string) {
	r := l.snapshot(by)
	st, et, why := classify(l.outcome(by, r))
	return r, st, et, why
}

// TestRealStreamsEndAsTheirScenario reads each recorded stream to its end
// and checks how the turn ends: by the stream itself (a final result, an
// authentication failure), or else by the watchdog that would fire, with
// the cause the stream gave.
func TestRealStreamsEndAsTheirScenario(t *testing.T) {
	for _, c := range []struct {
		name string
		end  FinalizedBy // what the stream alone ends the turn with; "" for none
		by   FinalizedBy // what ends it when the stream does not
		st   corral.Status
		et   corral.ErrorType
		text string // the answer starts with it
	}{
		{"claude-2.1.328-text", FinalizedByResult, "", corral.StatusSucceeded, "", "pong"},
		{"claude-2.1.328-tool", FinalizedByResult, "", corral.StatusSucceeded, "", "final: corral-fake-tool-ran"},
		{"claude-2.1.328-background-bash", FinalizedByResult, "", corral.StatusSucceeded, "", "final: <system-reminder>"},
		{"claude-2.1.328-background-agent", FinalizedByResult, "", corral.StatusSucceeded, "", "final: <system-reminder>"},
		{"claude-2.1.328-auth-401", FinalizedByAuth, "", corral.StatusFailed, corral.ErrorAuth, ""},
		{"claude-2.1.328-not-logged-in", FinalizedByAuth, "", corral.StatusFailed, corral.ErrorAuth, ""},
		{"claude-2.1.328-rate-limit-429", FinalizedByResult, "", corral.StatusFailed, corral.ErrorRateLimit, "API Error: Request rejected (429)"},
		{"claude-2.1.328-quota", FinalizedByResult, "", corral.StatusFailed, corral.ErrorQuota, "Credit balance is too low"},
		{"claude-2.1.328-server-500", FinalizedByResult, "", corral.StatusFailed, corral.ErrorStream, "API Error: 500"},
		{"claude-2.1.328-overloaded-529", FinalizedByResult, "", corral.StatusFailed, corral.ErrorRateLimit, "API Error: 529 Overloaded"},
		{"claude-2.1.328-garbage", FinalizedByResult, "", corral.StatusFailed, corral.ErrorStream, "API Error: API returned an empty or malformed response"},
		{"claude-2.1.328-stream-fail", "", FinalizedByIdle, corral.StatusFailed, corral.ErrorStream, ""},
		{"claude-2.1.328-model-404", FinalizedByResult, "", corral.StatusFailed, corral.ErrorModelUnsupported, "There's an issue with the selected model"},
		{"claude-2.1.328-hang", "", FinalizedByIdle, corral.StatusFailed, corral.ErrorIdle, ""},
		{"codex-0.169.0-text", FinalizedByResult, "", corral.StatusSucceeded, "", "pong"},
		{"codex-0.169.0-tool", FinalizedByResult, "", corral.StatusSucceeded, "", "final: Chunk ID"},
		{"codex-0.169.0-subagent", FinalizedByResult, "", corral.StatusSucceeded, "", "final: <subagent_notification>"},
		{"codex-0.169.0-yield", "", FinalizedByIdle, corral.StatusFailed, corral.ErrorIdle, ""},
		{"codex-0.169.0-auth-401", FinalizedByAuth, "", corral.StatusFailed, corral.ErrorAuth, ""},
		{"codex-0.169.0-missing-key", FinalizedByAuth, "", corral.StatusFailed, corral.ErrorAuth, ""},
		{"codex-0.169.0-rate-limit-429", FinalizedByResult, "", corral.StatusFailed, corral.ErrorRateLimit, ""},
		{"codex-0.169.0-quota", FinalizedByResult, "", corral.StatusFailed, corral.ErrorQuota, ""},
		{"codex-0.169.0-server-500", FinalizedByResult, "", corral.StatusFailed, corral.ErrorRateLimit, ""},
		{"codex-0.169.0-overloaded", FinalizedByResult, "", corral.StatusFailed, corral.ErrorRateLimit, ""},
		{"codex-0.169.0-garbage", FinalizedByResult, "", corral.StatusFailed, corral.ErrorStream, ""},
		{"codex-0.169.0-stream-fail", FinalizedByResult, "", corral.StatusFailed, corral.ErrorStream, ""},
		{"codex-0.169.0-model-404", FinalizedByResult, "", corral.StatusFailed, corral.ErrorModelUnsupported, ""},
		{"codex-0.169.0-hang", "", FinalizedByIdle, corral.StatusFailed, corral.ErrorIdle, ""},
		{"codex-0.169.0-offline", "", FinalizedByBudget, corral.StatusFailed, corral.ErrorStream, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := replay(t, &Spec{}, c.name, 0)
			if l.st.end != c.end {
				t.Fatalf("the stream ends the turn by %q, want %q", l.st.end, c.end)
			}
			by := c.end
			if by == "" {
				by = c.by
			}
			r, st, et, why := verdict(l, by)
			if st != c.st || et != c.et {
				t.Fatalf("ends %s %q (%s), want %s %q", st, et, why, c.st, c.et)
			}
			if !strings.HasPrefix(r.Text, c.text) {
				t.Errorf("answer %q, want it to start with %q", r.Text, c.text)
			}
			if r.ParseErrors != 0 {
				t.Errorf("%d parse errors: %s", r.ParseErrors, r.ParseErrorSample)
			}
			if r.SessionID == "" {
				t.Errorf("no session id")
			}
		})
	}
}

// TestRealClaudeAuthFailureEndsAtTheFirstRetry: Claude Code retries a 401
// for about three minutes; its first api_retry line ends the turn.
func TestRealClaudeAuthFailureEndsAtTheFirstRetry(t *testing.T) {
	l := replay(t, &Spec{}, "claude-2.1.328-auth-401", 2) // init, api_retry
	if l.st.end != FinalizedByAuth {
		t.Fatalf("end %q after the first api_retry", l.st.end)
	}
	_, _, et, why := verdict(l, l.st.end)
	if et != corral.ErrorAuth || !strings.Contains(why, "401 authentication_failed (try 1 of 2)") {
		t.Errorf("%q: %s", et, why)
	}
}

// TestRealCodexAuthFailureEndsAtTheFirstError: Codex prints an error line
// for each of its five retries of a 401; the first ends the turn.
func TestRealCodexAuthFailureEndsAtTheFirstError(t *testing.T) {
	l := replay(t, &Spec{}, "codex-0.169.0-auth-401", 4) // thread, model warning, turn, first error
	if l.st.end != FinalizedByAuth {
		t.Fatalf("end %q after the first error line", l.st.end)
	}
	_, _, et, why := verdict(l, l.st.end)
	if et != corral.ErrorAuth || !strings.Contains(why, "401 Unauthorized") || !strings.Contains(why, "try 1 of 5") {
		t.Errorf("%q: %s", et, why)
	}
}

// TestRealRetriesDecideAWatchdogsErrorType: a watchdog that fires while the
// agent retries a failing API reports the API's failure, and the announced
// retry delay holds the idle watchdog off.
func TestRealRetriesDecideAWatchdogsErrorType(t *testing.T) {
	for _, c := range []struct {
		name string
		upTo int
		et   corral.ErrorType
	}{
		{"claude-2.1.328-rate-limit-429", 3, corral.ErrorRateLimit},
		{"claude-2.1.328-overloaded-529", 3, corral.ErrorRateLimit},
		{"claude-2.1.328-server-500", 3, corral.ErrorStream},
		{"codex-0.169.0-rate-limit-429", 5, corral.ErrorRateLimit},
		{"codex-0.169.0-overloaded", 5, corral.ErrorRateLimit},
		{"codex-0.169.0-garbage", 5, corral.ErrorStream},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := replay(t, &Spec{}, c.name, c.upTo)
			if l.st.end != "" {
				t.Fatalf("the retries ended the turn: %q", l.st.end)
			}
			for _, by := range []FinalizedBy{FinalizedByIdle, FinalizedByBudget} {
				r, _, et, why := verdict(l, by)
				if et != c.et || r.APIFailure == nil || r.APIFailure.ErrorType != c.et {
					t.Errorf("by %s: %q (%s), api failure %+v", by, et, why, r.APIFailure)
				}
			}
		})
	}
	l := replay(t, &Spec{IdleTimeout: time.Second}, "claude-2.1.328-rate-limit-429", 3)
	if l.st.retryUntil.IsZero() {
		t.Fatal("the announced retry delay was not kept")
	}
	if d := l.deadline(time.Now()); d.Before(l.st.retryUntil) {
		t.Errorf("idle deadline %v before the announced retry %v", d, l.st.retryUntil)
	}
	// Once the model answers again, the failure is over.
	l.feed([]byte(`{"type":"assistant","message":{"id":"m","model":"claude-opus-5-5","content":[{"type":"text","text":"back"}]}}`+"\n"), 0)
	if r, _, et, _ := verdict(l, FinalizedByIdle); et != corral.ErrorIdle || r.APIFailure != nil {
		t.Errorf("after the API answered: %q, api failure %+v", et, r.APIFailure)
	}
}

// TestRealBackgroundWorkIsWaitedFor: a result while a background shell or
// sub-agent runs is a segment; the turn's answer is the follow-up's.
func TestRealBackgroundWorkIsWaitedFor(t *testing.T) {
	l := replay(t, &Spec{}, "claude-2.1.328-background-bash", 7) // up to the first result
	if l.st.end != "" || l.st.segments != 1 || len(l.st.bg) != 1 || l.st.bg[0].Type != "local_bash" || l.st.bgSince.IsZero() {
		t.Fatalf("after the first result: end %q segments %d bg %+v since %v", l.st.end, l.st.segments, l.st.bg, l.st.bgSince)
	}
	r, _, _, _ := verdict(l, FinalizedByBackground)
	if len(r.BackgroundTasks) != 1 || r.BackgroundTasks[0].Description != "background job" {
		t.Errorf("background tasks at a background timeout: %+v", r.BackgroundTasks)
	}

	// Claude Code reports a background sub-agent's turn only at the very
	// end, right before the follow-up's: the first of the two results is
	// not the last, though the background set is empty by then.
	l = replay(t, &Spec{}, "claude-2.1.328-background-agent", 13)
	if l.st.end != "" {
		t.Fatalf("the delayed result of the first turn ended the turn")
	}
	l = replay(t, &Spec{}, "claude-2.1.328-background-agent", 0)
	r = l.snapshot(FinalizedByResult)
	if l.st.end != FinalizedByResult || r.Segments != 2 || !strings.HasPrefix(r.Text, "final: ") {
		t.Errorf("end %q segments %d text %q", l.st.end, r.Segments, r.Text)
	}
}

// TestRealCodexCallsInTheTimeline: sub-agent calls are tool calls, and a
// yielded command stops holding off the idle watchdog after CommandYield.
func TestRealCodexCallsInTheTimeline(t *testing.T) {
	l := replay(t, &Spec{}, "codex-0.169.0-subagent", 0)
	r := l.snapshot(FinalizedByResult)
	if len(r.Tools) != 2 || r.Tools[0].Name != "collab_tool_call" || !strings.HasPrefix(r.Tools[0].Detail, "spawn_agent corral-fake-subagent-task") ||
		r.Tools[1].Name != "collab_tool_call" || !strings.HasPrefix(r.Tools[1].Detail, "wait ") || r.Tools[1].Open {
		t.Errorf("tools %+v", r.Tools)
	}
	if r.CostUSD != nil || r.Usage == nil || r.Usage.CacheWriteInputTokens != 120 || r.Usage.CachedInputTokens != 90 {
		t.Errorf("cost %v usage %+v", r.CostUSD, r.Usage)
	}

	// An open wait holds the idle watchdog off however long it lasts.
	l = replay(t, &Spec{IdleTimeout: time.Second}, "codex-0.169.0-subagent", 6)
	if held, _, _ := l.st.tl.idleHold(time.Now().Add(time.Hour)); !held {
		t.Errorf("an open sub-agent wait does not hold the idle watchdog off")
	}

	// A command holds it off only until its yield.
	l = replay(t, &Spec{IdleTimeout: time.Second, CommandYield: 2 * time.Second}, "codex-0.169.0-yield", 4)
	start := l.st.tl.open[0].start
	if held, next, _ := l.st.tl.idleHold(start.Add(time.Second)); !held || !next.Equal(start.Add(2*time.Second)) {
		t.Errorf("before its yield: held %v, lapses at %v", held, next)
	}
	if held, _, lapsed := l.st.tl.idleHold(start.Add(3 * time.Second)); held || !lapsed.Equal(start.Add(2*time.Second)) {
		t.Errorf("after its yield: held %v, lapsed at %v", held, lapsed)
	}
	l.mu.Lock()
	by := l.expired(start.Add(2*time.Second + 1500*time.Millisecond))
	l.mu.Unlock()
	if by != FinalizedByIdle {
		t.Errorf("silence past the yield and the idle limit: %q", by)
	}
}
