package service_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/storetest"
)

// limitedAgent speaks Claude Code's stream-json: its first turn hits a
// usage limit that "resets" in two seconds, every later one succeeds. $1
// is a file that counts the turns.
const limitedAgent = `n=$(cat "$1" 2>/dev/null || echo 0); echo $((n+1)) > "$1"
echo '{"type":"system","subtype":"init","session_id":"sess-rl","permissionMode":"default"}'
if [ "$n" = 0 ]; then
  echo '{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"You have hit your usage limit. Try again in 2 seconds."}]},"error":"rate_limit"}'
  echo '{"type":"result","subtype":"success","is_error":true,"result":"You have hit your usage limit. Try again in 2 seconds.","session_id":"sess-rl","total_cost_usd":0.1}'
  exit 1
fi
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"sess-rl","total_cost_usd":0.2}'`

// authAgent fails its turn on authentication.
const authAgent = `echo '{"type":"system","subtype":"init","session_id":"sess-au","permissionMode":"default"}'
echo '{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"Invalid API key"}]},"error":"authentication_failed"}'
echo '{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","session_id":"sess-au"}'
exit 1`

// TestRateLimitIsRetriedAtTheResetTimeAndAuthNever: a turn ended by a
// usage limit whose words give its reset time is retried then (not after
// the policy's hour of backoff), as attempt 2 linked to attempt 1, with
// the cost of both; an authentication failure is never retried.
func TestRateLimitIsRetriedAtTheResetTimeAndAuthNever(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		policy := corral.Retry{MaxAttempts: 3, RetryBackoff: corral.Duration(time.Hour)}
		counter := filepath.Join(t.TempDir(), "turns")
		f.agent(corral.Agent{Name: "rl", Kind: corral.KindHeadless, Retry: policy, Command: []string{"bash", "-c", limitedAgent, "agent", counter, "{{prompt}}"}})
		f.agent(corral.Agent{Name: "au", Kind: corral.KindHeadless, Retry: policy, Command: []string{"bash", "-c", authAgent, "agent", "{{prompt}}"}})

		first := f.waitTerminal(f.submit("rl", "go").ID, 30*time.Second)
		if first.ErrorType != corral.ErrorRateLimit || first.ResetAt == nil || first.RetriedBy == "" || first.MaxAttempts != 3 {
			t.Fatalf("attempt 1: %s %s reset %v retried by %q, max %d: %q", first.Status, first.ErrorType, first.ResetAt, first.RetriedBy, first.MaxAttempts, first.Error)
		}
		second := f.get(first.RetriedBy)
		if second.Attempt != 2 || second.RetryOf != first.ID || second.NextAttemptAt == nil || second.NextAttemptAt.Before(*first.ResetAt) || !strings.Contains(second.RetryReason, "reset time") {
			t.Fatalf("attempt 2 as recorded: %+v", second)
		}
		second = f.waitTerminal(second.ID, 30*time.Second)
		if second.Status != corral.StatusSucceeded || second.StartedAt == nil || second.StartedAt.Before(*first.ResetAt) {
			t.Fatalf("attempt 2: %s %q, started %v, reset %v", second.Status, second.Error, second.StartedAt, first.ResetAt)
		}
		if second.ChainCostUSD < 0.29 || second.ChainCostUSD > 0.31 {
			t.Errorf("chain cost %v, want both attempts' 0.3", second.ChainCostUSD)
		}

		au := f.waitTerminal(f.submit("au", "go").ID, 30*time.Second)
		if au.ErrorType != corral.ErrorAuth || au.RetriedBy != "" {
			t.Fatalf("authentication failure: %s, retried by %q", au.ErrorType, au.RetriedBy)
		}
		time.Sleep(200 * time.Millisecond) // no attempt appears later either
		if list, _, _ := f.svc.Executions(bg, service.ExecutionFilter{Agent: "au"}); len(list) != 1 {
			t.Fatalf("%d executions of the authentication failure, want 1", len(list))
		}
	})
}

// TestRetriesStopAtMaxAttemptsAndCancelStopsTheChain: a run retried for
// its error type makes MaxAttempts attempts, each linked to the one
// before; cancelling any attempt of a run cancels the attempt waiting.
func TestRetriesStopAtMaxAttemptsAndCancelStopsTheChain(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "ex", Retry: corral.Retry{MaxAttempts: 3, RetryOn: []corral.ErrorType{corral.ErrorExit}, RetryBackoff: corral.Duration(10 * time.Millisecond)}})
		e := f.submit("ex", "exit 7")
		var chain []*corral.Execution
		for id := e.ID; id != ""; {
			x := f.waitTerminal(id, 30*time.Second)
			chain = append(chain, x)
			if x.RetriedBy == "" {
				break
			}
			id = x.RetriedBy
		}
		if len(chain) != 3 {
			t.Fatalf("%d attempts, want 3", len(chain))
		}
		for i, x := range chain {
			if x.Attempt != i+1 || x.Status != corral.StatusFailed || i > 0 && x.RetryOf != chain[i-1].ID {
				t.Fatalf("attempt %d: %+v", i+1, x)
			}
		}

		f.agent(corral.Agent{Name: "cx", Retry: corral.Retry{MaxAttempts: 5, RetryOn: []corral.ErrorType{corral.ErrorExit}, RetryBackoff: corral.Duration(time.Hour)}})
		one := f.waitTerminal(f.submit("cx", "exit 3").ID, 30*time.Second)
		if one.RetriedBy == "" || f.get(one.RetriedBy).Status != corral.StatusWaiting {
			t.Fatalf("attempt 1 %+v: no attempt waiting", one)
		}
		c, err := f.svc.Cancel(bg, one.ID)
		if err != nil || c.ID != one.RetriedBy || c.Status != corral.StatusCancelled {
			t.Fatalf("cancel through attempt 1: %+v (%v), want attempt 2 cancelled", c, err)
		}
		if _, err := f.svc.Cancel(bg, one.ID); !errors.Is(err, service.ErrConflict) {
			t.Fatalf("cancel of a finished run: %v", err)
		}
	})
}

// TestRetryPolicyIsValidated: what can never pass is refused, with words
// that say why.
func TestRetryPolicyIsValidated(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		for i, r := range []corral.Retry{
			{MaxAttempts: 3, RetryOn: []corral.ErrorType{corral.ErrorAuth}},
			{MaxAttempts: -1},
			{MaxAttempts: 3, RetryOn: []corral.ErrorType{"sometimes"}},
			{Resume: true},
		} {
			_, err := f.svc.CreateAgent(bg, &corral.Agent{Name: fmt.Sprint("v", i), Kind: corral.KindShell, Retry: r})
			if !errors.Is(err, service.ErrInvalid) {
				t.Errorf("policy %+v: %v", r, err)
			}
		}
		testutil.AssertNoTagged(t, f.tag, time.Second)
	})
}

// burner speaks Claude Code's stream-json and spends for ever: a message
// of 100,000 input tokens of claude-sonnet-4-5 ($0.30) every 50 ms.
const burner = `echo '{"type":"system","subtype":"init","session_id":"sess-b","permissionMode":"default"}'
i=0; while :; do i=$((i+1))
echo "{\"type\":\"assistant\",\"message\":{\"id\":\"m$i\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":100000,\"output_tokens\":0},\"content\":[{\"type\":\"text\",\"text\":\"more\"}]}}"
sleep 0.05; done`

// slowBurner is burner with a second between its messages: a run's result
// counts what the lines still in the pipe report once its ceiling ended
// it (the agent spent it), so the next message must not come before the
// run is torn down, which on a loaded machine took more than 50 ms.
var slowBurner = strings.Replace(burner, "sleep 0.05", "sleep 1", 1)

// TestBudgetWindowEndsRunsAndRefusesTasksOnceSpent: runs spend an
// agent's daily window as their usage arrives; the run whose spend
// crosses it ends as max_budget at that event, the window overspent by
// at most one event per run in flight, and a new task is refused until
// the window reopens. A run's own ceiling ends it the same way.
func TestBudgetWindowEndsRunsAndRefusesTasksOnceSpent(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{})
		f.agent(corral.Agent{Name: "burn", Kind: corral.KindHeadless, MaxParallelTasks: 2, Command: []string{"bash", "-c", burner, "agent", "{{prompt}}"},
			Budget: corral.Budget{DailyCostUSD: 1}})
		a, b := f.submit("burn", "go"), f.submit("burn", "go")
		for _, e := range []*corral.Execution{f.waitTerminal(a.ID, 30*time.Second), f.waitTerminal(b.ID, 30*time.Second)} {
			if e.Status != corral.StatusFailed || e.ErrorType != corral.ErrorMaxBudget || !strings.Contains(e.Error, "daily cost budget is spent") {
				t.Fatalf("a run of a spent window: %s %s %q", e.Status, e.ErrorType, e.Error)
			}
		}
		spend, err := f.svc.Spend(bg, "burn")
		if err != nil || len(spend) != 1 {
			t.Fatalf("spend %+v (%v)", spend, err)
		}
		t.Logf("window spent $%.2f of $1.00 by two runs in flight", spend[0].CostUSD)
		if spend[0].CostUSD < 1 || spend[0].CostUSD > 1+2*0.3+1e-9 {
			t.Fatalf("the window spent $%.4f: over $1 by more than one $0.30 event per run in flight", spend[0].CostUSD)
		}
		_, err = f.svc.Submit(bg, service.Task{Agent: "burn", Input: "go"})
		var rej *service.RejectedError
		if !errors.As(err, &rej) || !errors.Is(err, service.ErrBudgetSpent) || !rej.RetryAt.Equal(spend[0].End) {
			t.Fatalf("a task once the window is spent: %v", err)
		}

		f.agent(corral.Agent{Name: "cap", Kind: corral.KindHeadless, Command: []string{"bash", "-c", slowBurner, "agent", "{{prompt}}"},
			Budget: corral.Budget{MaxCostUSD: 0.5}})
		e := f.waitTerminal(f.submit("cap", "go").ID, 30*time.Second)
		if e.ErrorType != corral.ErrorMaxBudget || e.CostUSD < 0.5 || e.CostUSD > 0.61 || !e.CostEstimated || !strings.Contains(e.Error, "over its ceiling of $0.5000") {
			t.Fatalf("a run over its own ceiling: %s $%v estimated %v: %q", e.ErrorType, e.CostUSD, e.CostEstimated, e.Error)
		}
	})
}
