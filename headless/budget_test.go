package headless_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/testutil"
)

// spender speaks Claude Code's stream-json: a message whose usage spans
// two lines (one per content block: counted once), a costly message, then
// it hangs. $1 is a file it touches just before it writes the costly
// message.
const spender = `echo '{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5-20250929","permissionMode":"default"}'
m1='"id":"m1","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":1000,"output_tokens":1000}'
echo "{\"type\":\"assistant\",\"message\":{$m1,\"content\":[{\"type\":\"text\",\"text\":\"thinking\"}]}}"
echo "{\"type\":\"assistant\",\"message\":{$m1,\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}]}}"
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}'
sleep 0.2
touch "$1"
echo '{"type":"assistant","message":{"id":"m2","model":"claude-sonnet-4-5-20250929","usage":{"input_tokens":100000,"output_tokens":100000},"content":[{"type":"text","text":"a long answer"}]}}'
sleep 300`

// spendTurn runs spender with spec's ceilings and returns the result and
// how long after the costly message the turn ended.
func spendTurn(t *testing.T, set func(*headless.Spec)) (*headless.Result, time.Duration) {
	t.Helper()
	tag := testutil.Tag(t)
	t.Cleanup(func() { testutil.AssertNoTagged(t, tag, 10*time.Second) })
	mark := filepath.Join(t.TempDir(), "spent")
	spec := &headless.Spec{Args: []string{"bash", "-c", spender, "agent", mark}, Env: []string{testutil.TagEnvVar(tag)}, Grace: 500 * time.Millisecond}
	set(spec)
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	fi, err := os.Stat(mark)
	if err != nil {
		t.Fatalf("the turn ended before the costly message: %s %s", r.FinalizedBy, r.Reason)
	}
	closeTurn(t, turn)
	return r, r.Start.Add(r.Duration).Sub(fi.ModTime())
}

// TestCostCeilingEndsTheTurnAtTheMessageThatCrossesIt: the messages'
// usage is priced as it arrives (a message spread over lines counted
// once), and the turn ends as max_budget at the message that crosses
// $1, with what it spent.
func TestCostCeilingEndsTheTurnAtTheMessageThatCrossesIt(t *testing.T) {
	r, after := spendTurn(t, func(s *headless.Spec) { s.MaxCostUSD = 1 })
	expect(t, r, corral.StatusFailed, corral.ErrorMaxBudget, headless.FinalizedByMaxBudget)
	// m1: 1000 in × $3 + 1000 out × $15 per million; m2: 100,000 of each.
	want := 0.003 + 0.015 + 0.3 + 1.5
	if r.Spend == nil || math.Abs(r.Spend.CostUSD-want) > 1e-9 || r.Spend.CostReported || !r.CostEstimated || r.Spend.Tokens != 202000 {
		t.Fatalf("spend %+v, cost estimated %v; want $%v of 202000 tokens", r.Spend, r.CostEstimated, want)
	}
	if !strings.Contains(r.Reason, "over its ceiling of $1.0000") || r.SessionID != "s1" {
		t.Fatalf("reason %q, session %q", r.Reason, r.SessionID)
	}
	t.Logf("ended %v after the message that crossed the ceiling", after.Round(time.Millisecond))
	if after > promptly {
		t.Fatalf("ended %v after the message that crossed the ceiling", after)
	}
}

// TestTokenCeilingHoldsWithoutAPrice: a model with no price makes the
// cost unknown (said in the spend note), and the token ceiling holds all
// the same.
func TestTokenCeilingHoldsWithoutAPrice(t *testing.T) {
	r, _ := spendTurn(t, func(s *headless.Spec) {
		s.MaxTokens = 3000
		s.MaxCostUSD = 100
		s.Prices = &headless.Prices{Models: map[string]headless.Price{"other-model": {Input: 1, Output: 1}}}
	})
	expect(t, r, corral.StatusFailed, corral.ErrorMaxBudget, headless.FinalizedByMaxBudget)
	if !strings.Contains(r.Reason, "202000 tokens, over its ceiling of 3000") || r.CostUSD != nil || !strings.Contains(r.SpendNote, "claude-sonnet-4-5") {
		t.Fatalf("reason %q, cost %v, note %q", r.Reason, r.CostUSD, r.SpendNote)
	}
}

// TestOnSpendCanEndTheTurn: the caller sees the spend after each event
// and ends the turn by saying why (the service's budget windows).
func TestOnSpendCanEndTheTurn(t *testing.T) {
	var calls atomic.Int32
	r, _ := spendTurn(t, func(s *headless.Spec) {
		s.OnSpend = func(sp headless.Spend) error {
			if calls.Add(1); sp.Tokens > 100000 {
				return errors.New("the agent's daily token budget is spent")
			}
			return nil
		}
	})
	expect(t, r, corral.StatusFailed, corral.ErrorMaxBudget, headless.FinalizedByMaxBudget)
	if r.Reason != "the agent's daily token budget is spent" || calls.Load() != 2 {
		t.Fatalf("reason %q after %d calls, want 2 (one per message)", r.Reason, calls.Load())
	}
}

// TestCodexCostIsEstimatedFromItsUsageAndModel: Codex reports tokens
// only; its cost is priced by the model its command line names, its
// cached input at the cached price.
func TestCodexCostIsEstimatedFromItsUsageAndModel(t *testing.T) {
	tag := testutil.Tag(t)
	script := `echo '{"type":"thread.started","thread_id":"th"}'; echo '{"type":"turn.started"}'
echo '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"done"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":500000,"output_tokens":100000}}'`
	spec := &headless.Spec{Args: []string{"bash", "-c", script, "codex", "exec", "-c", `model="gpt-5-codex"`, "--", "go"}, Env: []string{testutil.TagEnvVar(tag)}}
	turn := start(t, context.Background(), spec)
	r := wait(t, turn)
	closeTurn(t, turn)
	expect(t, r, corral.StatusSucceeded, corral.ErrorNone, headless.FinalizedByResult)
	want := 0.5*1.25 + 0.5*0.125 + 0.1*10
	if r.CostUSD == nil || math.Abs(*r.CostUSD-want) > 1e-9 || !r.CostEstimated || r.Spend.Tokens != 1100000 {
		t.Fatalf("cost %v estimated %v spend %+v, want $%v", r.CostUSD, r.CostEstimated, r.Spend, want)
	}
}

func TestPricesFileOverridesAndIsChecked(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "p.json")
	os.WriteFile(good, []byte(`{"date":"2026-12-01","source":"ours","models":{"claude-sonnet-4-5":{"input":30,"output":150},"fake-model":{"input":1,"output":2}}}`), 0o600)
	p, err := headless.LoadPrices(good)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := p.Lookup("claude-sonnet-4-5-20250929"); !ok || m.Input != 30 {
		t.Fatalf("overridden price %+v %v", m, ok)
	}
	if _, ok := p.Lookup("gpt-5"); !ok {
		t.Fatal("the shipped prices are lost when a file adds to them")
	}
	for name, body := range map[string]string{
		"not json": `{`, "negative": `{"models":{"m":{"input":-1,"output":1}}}`, "unknown field": `{"models":{"m":{"input":1,"output":1,"per":"k"}}}`,
		"no models": `{"date":"x"}`, "no price": `{"models":{"m":{}}}`,
	} {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(f, []byte(body), 0o600)
		if _, err := headless.LoadPrices(f); err == nil {
			t.Errorf("%s: a malformed price file was taken", name)
		}
	}
	if d := headless.DefaultPrices(); d.Date == "" || d.Source == "" || len(d.Models) < 10 {
		t.Fatalf("the shipped table: %+v", d)
	}
}
