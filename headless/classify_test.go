package headless

import (
	"syscall"
	"testing"

	"github.com/corralrun/corral"
)

// TestClassifyFollowsTheDocumentedOrder pins each rule of classify's order,
// with evidence that would mislead a later rule.
func TestClassifyFollowsTheDocumentedOrder(t *testing.T) {
	authResult := &resultInfo{subtype: "success", isError: true, text: "Invalid API key · Please run /login"}
	for _, c := range []struct {
		name string
		o    outcome
		st   corral.Status
		et   corral.ErrorType
	}{
		{"cancel is sticky over a success", outcome{by: FinalizedByCancel, result: &resultInfo{subtype: "success"}}, corral.StatusCancelled, corral.ErrorCancelled},
		{"permission mode", outcome{by: FinalizedByPermissionMode, permWhy: "x"}, corral.StatusFailed, corral.ErrorPermissionMode},
		{"auth seen live", outcome{by: FinalizedByAuth, authLine: "Invalid API key"}, corral.StatusFailed, corral.ErrorAuth},
		{"success", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "success"}}, corral.StatusSucceeded, corral.ErrorNone},
		{"codex turn.completed", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "turn.completed", codex: true}}, corral.StatusSucceeded, corral.ErrorNone},
		{"success with is_error is a failure", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "success", isError: true, text: "API Error: 500"}}, corral.StatusFailed, corral.ErrorStream},
		{"max_turns never looks like auth", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "error_max_turns", isError: true, text: "Invalid API key"}, errs: []string{"authentication_failed"}}, corral.StatusFailed, corral.ErrorMaxTurns},
		{"max_budget", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "error_max_budget_usd", isError: true}}, corral.StatusFailed, corral.ErrorMaxBudget},
		{"auth text in an error result", outcome{by: FinalizedByResult, result: authResult}, corral.StatusFailed, corral.ErrorAuth},
		{"rate limit code", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "success", isError: true, text: "API Error"}, errs: []string{"rate_limit"}}, corral.StatusFailed, corral.ErrorRateLimit},
		{"codex usage limit is quota", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "turn.failed", isError: true, codex: true, errors: []string{"You've hit your usage limit."}}, errs: []string{"You've hit your usage limit."}}, corral.StatusFailed, corral.ErrorQuota},
		{"claude billing_error is quota", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "success", isError: true, text: "Credit balance is too low"}, errs: []string{"billing_error"}}, corral.StatusFailed, corral.ErrorQuota},
		{"codex 429 after its retries is rate_limit", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "turn.failed", isError: true, codex: true, errors: []string{"exceeded retry limit, last status: 429 Too Many Requests"}}}, corral.StatusFailed, corral.ErrorRateLimit},
		{"codex missing key variable is auth", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "turn.failed", isError: true, codex: true, errors: []string{"Missing environment variable: `FAKE_API_KEY`."}}}, corral.StatusFailed, corral.ErrorAuth},
		{"model not found", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "success", isError: true}, errs: []string{"model_not_found"}}, corral.StatusFailed, corral.ErrorModelUnsupported},
		{"error_during_execution", outcome{by: FinalizedByResult, result: &resultInfo{subtype: "error_during_execution", isError: true}}, corral.StatusFailed, corral.ErrorStream},
		{"stall", outcome{by: FinalizedByStall, stalled: &ToolCall{ID: "t", Name: "mcp__a__b"}}, corral.StatusFailed, corral.ErrorStall},
		{"idle", outcome{by: FinalizedByIdle}, corral.StatusFailed, corral.ErrorIdle},
		{"budget", outcome{by: FinalizedByBudget}, corral.StatusFailed, corral.ErrorTimeout},
		{"idle never hides a rate limit being retried", outcome{by: FinalizedByIdle, failure: &apiFailure{cause: corral.ErrorRateLimit, text: "rate_limit", status: 429, attempt: 4, max: 10}}, corral.StatusFailed, corral.ErrorRateLimit},
		{"budget never hides an overload being retried", outcome{by: FinalizedByBudget, failure: &apiFailure{cause: corral.ErrorRateLimit, text: "overloaded", status: 529, attempt: 7, max: 10}}, corral.StatusFailed, corral.ErrorRateLimit},
		{"budget during server errors", outcome{by: FinalizedByBudget, failure: &apiFailure{cause: corral.ErrorStream, text: "server_error", status: 500, attempt: 2, max: 10}}, corral.StatusFailed, corral.ErrorStream},
		{"stall is its own cause", outcome{by: FinalizedByStall, failure: &apiFailure{cause: corral.ErrorRateLimit}}, corral.StatusFailed, corral.ErrorStall},
		{"background timeout with a server left running keeps the answer", outcome{by: FinalizedByBackground, result: &resultInfo{subtype: "success"}, bg: []BackgroundTask{{ID: "b1", Type: "local_bash", Description: "npm run dev"}}}, corral.StatusSucceeded, corral.ErrorNone},
		{"background timeout with a sub-agent still working", outcome{by: FinalizedByBackground, result: &resultInfo{subtype: "success"}, bg: []BackgroundTask{{ID: "a1", Type: "local_agent"}, {ID: "b1", Type: "local_bash"}}}, corral.StatusFailed, corral.ErrorTimeout},
		{"a signal never looks like auth", outcome{by: FinalizedByExit, exitCode: -1, signal: syscall.SIGKILL, errs: []string{"authentication_failed"}, stderr: "Invalid API key"}, corral.StatusFailed, corral.ErrorSignal},
		{"a signal wins over a segment", outcome{by: FinalizedByExit, exitCode: -1, signal: syscall.SIGKILL, result: &resultInfo{subtype: "success"}}, corral.StatusFailed, corral.ErrorSignal},
		{"exit after a segment", outcome{by: FinalizedByExit, result: &resultInfo{subtype: "success"}}, corral.StatusSucceeded, corral.ErrorNone},
		{"rate limit then exit", outcome{by: FinalizedByExit, exitCode: 1, errs: []string{"rate_limit"}, validJSON: true}, corral.StatusFailed, corral.ErrorRateLimit},
		{"auth code without a live abort is not concluded at exit", outcome{by: FinalizedByExit, exitCode: 1, errs: []string{"Invalid API key"}, validJSON: true}, corral.StatusFailed, corral.ErrorCrash},
		{"exit 0 without a result", outcome{by: FinalizedByExit, validJSON: true}, corral.StatusFailed, corral.ErrorEmptyResult},
		{"exit 0 with no JSON at all", outcome{by: FinalizedByExit, lastText: "plain answer"}, corral.StatusFailed, corral.ErrorStream},
		{"non-zero exit without a result", outcome{by: FinalizedByExit, exitCode: 2, validJSON: true, stderr: "boom\n"}, corral.StatusFailed, corral.ErrorCrash},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, et, why := classify(&c.o)
			if st != c.st || et != c.et {
				t.Fatalf("got %s %q (%s), want %s %q", st, et, why, c.st, c.et)
			}
			if (st != corral.StatusSucceeded || c.o.by == FinalizedByBackground) && why == "" {
				t.Errorf("no reason")
			}
		})
	}
}
