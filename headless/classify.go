package headless

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/proc"
)

// outcome is what the turn knows when it ends, the input of classify.
type outcome struct {
	by        FinalizedBy
	result    *resultInfo // the last result seen, final or a segment
	errs      []string    // errors the agent reported in the stream
	authLine  string      // the text that tripped the auth abort
	permWhy   string      // why the permission mode check failed
	stalled   *ToolCall
	exitCode  int
	signal    syscall.Signal
	validJSON bool // at least one line was a JSON object
	lastText  string
	stderr    string           // stderr tail, for the reason of a crash
	failure   *apiFailure      // a model API failure not yet recovered from
	bg        []BackgroundTask // background tasks live at the end
	bgTimeout time.Duration
	spendWhy  string
}

// classify decides the status and error type of a turn, in this order (the
// first rule that applies wins):
//
//  1. Cancelled by the caller → cancelled. Sticky: a result that arrives
//     after the cancellation does not undo it.
//  2. The required permission mode did not take effect → permission_mode.
//  3. Auth failure text on stderr or in the stream, acted on live →
//     auth.
//  4. The agent ended its turn (final result, Codex turn end) → from that
//     result: error_max_turns → max_turns; error_max_budget_usd →
//     max_budget; success without is_error (turn.completed) → succeeded;
//     otherwise, from the agent's error codes and messages, auth →
//     quota → rate_limit → model_unsupported, else stream_error. Subtypes come
//     first, so max_turns never looks like auth.
//  5. A watchdog fired: stall → stall, idle → idle, budget → timeout;
//     but when the agent was retrying a failed model API call (or had
//     reported an API error) and the API had not answered since, idle and
//     budget report that cause instead (rate_limit, quota,
//     model_unsupported, stream_error), so that a watchdog never hides
//     what the stream already said. The background timeout keeps the last
//     result's outcome when only background shells were live (a server
//     left running), and is timeout when sub-agents or other tasks were.
//  6. The process ended before the turn did: a signal (one corral did
//     not send, an OOM kill included) → signal, never auth; a result
//     segment was seen → rule 4 on it; a rate-limit or model error in
//     the stream → quota, rate_limit or model_unsupported; exit 0 with output
//     but no JSON line → stream_error; exit 0 → empty_result; non-zero
//     exit → crash.
func classify(o *outcome) (corral.Status, corral.ErrorType, string) {
	switch o.by {
	case FinalizedByCancel:
		return corral.StatusCancelled, corral.ErrorCancelled, "cancelled by the caller"
	case FinalizedByPermissionMode:
		return corral.StatusFailed, corral.ErrorPermissionMode, o.permWhy
	case FinalizedByAuth:
		return corral.StatusFailed, corral.ErrorAuth,
			"authentication failed (" + clip(o.authLine, 400) + "): log the agent in again or fix its API key (for Codex, set the variable its model provider names in env_key)"
	case FinalizedByResult:
		return classifyResult(o.result, o.errs)
	case FinalizedByStall:
		why := "a tool call stayed open past its stall limit"
		if o.stalled != nil {
			why = fmt.Sprintf("tool call %s (%s) open for %.0fs without a result, past its stall limit of %.0fs: raise it with a per-tool limit if the tool is legitimately slow",
				o.stalled.ID, o.stalled.Name, o.stalled.DurationMS/1000, o.stalled.StallLimitMS/1000)
		}
		return corral.StatusFailed, corral.ErrorStall, why
	case FinalizedByIdle:
		return withCause(o.failure, corral.ErrorIdle, "the agent wrote nothing past the idle limit while no tool call was open and no background task was live")
	case FinalizedByBudget:
		return withCause(o.failure, corral.ErrorTimeout, "the turn's budget ran out")
	case FinalizedByMaxBudget:
		return corral.StatusFailed, corral.ErrorMaxBudget, o.spendWhy
	case FinalizedByBackground:
		return classifyBackground(o)
	}
	// The process ended before the turn did.
	if o.signal != 0 {
		return corral.StatusFailed, corral.ErrorSignal,
			"the agent was killed by " + proc.SignalName(o.signal) + " (not sent by corral; an out-of-memory kill looks the same)"
	}
	if o.result != nil {
		st, et, why := classifyResult(o.result, o.errs)
		return st, et, why + " (the agent exited after a result while background tasks were still listed)"
	}
	if et := errorsType(o.errs, false); et != corral.ErrorNone {
		return corral.StatusFailed, et, fmt.Sprintf("the agent exited %d without a result after reporting %q", o.exitCode, clip(lastOf(o.errs), 200))
	}
	if o.exitCode == 0 {
		if !o.validJSON && o.lastText != "" {
			return corral.StatusFailed, corral.ErrorStream,
				"the agent exited 0 but wrote no JSON line: check that it was given --output-format stream-json --verbose (Claude Code) or --json (Codex)"
		}
		return corral.StatusFailed, corral.ErrorEmptyResult, "the agent exited 0 without a result"
	}
	why := fmt.Sprintf("the agent exited %d without a result", o.exitCode)
	if l := lastLine(o.stderr); l != "" {
		why += ": " + clip(l, 300)
	}
	return corral.StatusFailed, corral.ErrorCrash, why
}

// withCause is a watchdog's outcome, unless the stream had already told
// the cause: a model API failure the agent had not recovered from.
func withCause(f *apiFailure, et corral.ErrorType, why string) (corral.Status, corral.ErrorType, string) {
	if f == nil || f.cause == corral.ErrorNone {
		return corral.StatusFailed, et, why
	}
	what := "retrying"
	if f.attempt == 0 {
		what = "after"
	}
	return corral.StatusFailed, f.cause, fmt.Sprintf("%s while the agent was %s a failed model API call: %s%s", why, what, f.describe(), advice(f.cause))
}

// advice says what to do about a cause.
func advice(et corral.ErrorType) string {
	switch et {
	case corral.ErrorRateLimit:
		return ": the provider throttled or shed the requests; retry later or lower the concurrency"
	case corral.ErrorQuota:
		return ": the account's credit or quota is exhausted; raise it or wait for it to reset"
	case corral.ErrorModelUnsupported:
		return ": choose a model the account can use"
	}
	return ""
}

// classifyBackground decides a turn that the background timeout ended:
// the agent had given a result, and its background tasks outlived the
// wait. Shell commands left running (a dev server) do not undo the
// agent's answer; a sub-agent or workflow still working means the answer
// was not the final one.
func classifyBackground(o *outcome) (corral.Status, corral.ErrorType, string) {
	var names []string
	shells := true
	for _, t := range o.bg {
		names = append(names, strings.TrimSpace(t.ID+" ("+t.Type+") "+t.Description))
		if t.Type != "local_bash" {
			shells = false
		}
	}
	why := fmt.Sprintf("background tasks were still live %s after the agent's last result and were stopped: %s",
		o.bgTimeout, clip(strings.Join(names, "; "), 400))
	if shells {
		st, et, rwhy := classifyResult(o.result, o.errs)
		if rwhy != "" {
			why = rwhy + "; " + why
		}
		return st, et, why
	}
	return withCause(o.failure, corral.ErrorTimeout, why+": raise --background-timeout if they needed longer")
}

// classifyResult applies rule 4 to a result.
func classifyResult(r *resultInfo, errs []string) (corral.Status, corral.ErrorType, string) {
	if r == nil {
		return corral.StatusFailed, corral.ErrorEmptyResult, "no result"
	}
	switch r.subtype {
	case "error_max_turns":
		return corral.StatusFailed, corral.ErrorMaxTurns, "the agent hit its turn limit (--max-turns)"
	case "error_max_budget_usd":
		return corral.StatusFailed, corral.ErrorMaxBudget, "the agent hit its spending limit (--max-budget-usd)"
	}
	if !r.isError && (r.subtype == "success" || r.subtype == "turn.completed") {
		return corral.StatusSucceeded, corral.ErrorNone, ""
	}
	evidence := append(append(append([]string(nil), errs...), r.errors...), r.text)
	et := errorsType(evidence, true)
	msg := lastOf(r.errors)
	if msg == "" {
		msg = r.text
	}
	what := "the agent ended its turn with an error"
	if r.subtype != "" && r.subtype != "success" {
		what += " (" + r.subtype + ")"
	}
	if msg != "" {
		what += ": " + clip(msg, 300)
	}
	if et == corral.ErrorNone {
		et = corral.ErrorStream
	}
	return corral.StatusFailed, et, what
}

// errorsType reads error codes and messages, in the order auth, quota,
// rate_limit, model_unsupported. withAuth is false where auth must not be
// concluded from text alone (it was acted on live when it was real).
func errorsType(errs []string, withAuth bool) corral.ErrorType {
	if withAuth {
		for _, e := range errs {
			if isAuthText(e) || matchAny(e, keyMissingTexts) {
				return corral.ErrorAuth
			}
		}
	}
	for _, e := range errs {
		if matchAny(e, quotaTexts) {
			return corral.ErrorQuota
		}
	}
	for _, e := range errs {
		if matchAny(e, rateLimitTexts) {
			return corral.ErrorRateLimit
		}
	}
	for _, e := range errs {
		if matchAny(e, modelTexts) {
			return corral.ErrorModelUnsupported
		}
	}
	return corral.ErrorNone
}

// The texts are matched case-insensitively as substrings. They are the
// agents' own words, never HTTP status codes.
var (
	authTexts = []string{
		"authentication_failed", "authentication failed", "invalid api key",
		"invalid x-api-key", "invalid_api_key", "incorrect api key",
		"oauth token has expired", "oauth token expired", "token has expired",
		"please run /login", "please run `codex login`", "not logged in",
		"invalid bearer token", "could not resolve authentication",
		"401 unauthorized",
	}
	// keyMissingTexts are Codex's words for a model provider whose API key
	// variable is not set. They are read in the stream only, never on
	// stderr, where a tool could print them about something else.
	keyMissingTexts = []string{"missing environment variable"}
	quotaTexts      = []string{
		"billing_error", "credit balance", "insufficient_quota", "quota exceeded",
		"exceeded your current quota", "usage limit", "out of credits",
	}
	rateLimitTexts = []string{
		"rate_limit", "rate limit", "ratelimit", "too many requests",
		"overloaded", "at capacity", "high demand", "limit reached",
	}
	modelTexts = []string{
		"model_not_found", "model not found", "unknown model", "invalid model",
		"model is not supported", "unsupported model", "not a valid model",
		"does not exist or you do not have access",
	}
)

func isAuthText(s string) bool { return matchAny(s, authTexts) }

// matchAny reports whether s contains one of the lower-case needles,
// ignoring case, without allocating for ASCII input.
func matchAny(s string, needles []string) bool {
	if s == "" {
		return false
	}
	for _, n := range needles {
		if containsFold(s, n) {
			return true
		}
	}
	return false
}

// containsFold is strings.Contains ignoring ASCII case; needle is lower
// case.
func containsFold(s, needle string) bool {
	n := len(needle)
	if n == 0 {
		return true
	}
	first := needle[0]
	upper := first
	if first >= 'a' && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	for i := 0; i+n <= len(s); i++ {
		c := s[i]
		if c != first && c != upper {
			continue
		}
		j := 1
		for ; j < n; j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// apiFailure is a failed model API call as the stream reported it: a
// retry (Claude's api_retry, Codex's "Reconnecting...") or an error line.
type apiFailure struct {
	cause        corral.ErrorType
	text         string
	status       int
	attempt, max int
	delay        time.Duration // before the next try, when announced
}

// describe says in a few words what failed: "429 rate_limit (try 3 of
// 10)".
func (f *apiFailure) describe() string {
	s := clip(f.text, 300)
	if f.status != 0 {
		s = strconv.Itoa(f.status) + " " + s
	}
	switch {
	case f.attempt > 0 && f.max > 0:
		s += fmt.Sprintf(" (try %d of %d)", f.attempt, f.max)
	case f.attempt > 0:
		s += fmt.Sprintf(" (try %d)", f.attempt)
	}
	return s
}

func (f *apiFailure) public() *APIFailure {
	if f == nil {
		return nil
	}
	return &APIFailure{ErrorType: f.cause, Error: f.text, Status: f.status, Attempt: f.attempt, MaxAttempts: f.max}
}

// causeOfCode reads Claude Code's error code for a failed API call (the
// api_retry error and the assistant error field) with its HTTP status.
func causeOfCode(code string, status int) corral.ErrorType {
	switch code {
	case "authentication_failed":
		return corral.ErrorAuth
	case "billing_error":
		return corral.ErrorQuota
	case "rate_limit", "overloaded":
		return corral.ErrorRateLimit
	case "model_not_found":
		return corral.ErrorModelUnsupported
	}
	switch status {
	case 401:
		return corral.ErrorAuth
	case 429, 529:
		return corral.ErrorRateLimit
	}
	if et := causeOfText(code); et != corral.ErrorNone {
		return et
	}
	return corral.ErrorStream
}

// causeOfText reads an agent's error message: auth, quota, rate_limit,
// model_unsupported, or none.
func causeOfText(msg string) corral.ErrorType {
	return errorsType([]string{msg}, true)
}
