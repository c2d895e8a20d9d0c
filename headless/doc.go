// Package headless runs one headless coding-agent turn — Claude Code's
// `claude -p --output-format stream-json --verbose` or Codex's
// `codex exec --json` — under corral's supervision core, reads its stream
// as it arrives, and ends the turn when the agent says it is over, not when
// its process exits.
//
// # When a turn is over
//
// A turn is over when the agent emits a result (Claude's "result" line;
// Codex's turn.completed or turn.failed) while its live background-task set
// is empty. The set comes from Claude's background_tasks_changed lines
// (replace semantics), without ambient tasks; shell commands Claude Code
// runs in the background count, as it waits for them and answers again. A
// result while background tasks are live is a segment: the turn goes on
// until the final one, for at most Spec.BackgroundTimeout after the latest
// segment. Claude Code begins each turn, follow-ups included, with an init
// line and may report a turn's result after the next one began, so a
// result is final only once every turn begun has its result.
//
// At the end of the turn, Wait returns at once (in about a millisecond; see
// the benchmarks), whatever the process tree is doing: an MCP server holding
// the pipe, a hung tool call, an agent that never exits. The tree is then
// torn down in the background: the agent may exit by itself within
// Spec.Linger, then the core's SIGTERM → grace → SIGKILL ends everything.
// TornDown and Close report the end of the teardown; no goroutine of the
// turn outlives it.
//
// # Backstops
//
//   - Stall: a tool call open past its stall limit without its result.
//     By default only MCP tools ("mcp__*") have one (Spec.StallTimeout, 30
//     minutes); Spec.ToolLimits sets or removes limits by name or glob.
//   - Idle: no stream output past Spec.IdleTimeout while no tool call is
//     open and no background task is live. A long tool call is governed by
//     its stall limit and the budget, never by idleness — except a Codex
//     command, which Codex hands back to the model after its yield time
//     while its item stays open: it holds idleness off for
//     Spec.CommandYield only. A retry the agent announced (Claude's
//     api_retry retry_delay_ms) holds it off until it is due.
//   - Background: background tasks still live Spec.BackgroundTimeout after
//     the latest result (a dev server left running).
//   - Budget: Spec.Timeout, the unconditional backstop.
//   - Fast aborts: authentication failure text on stderr or in the stream
//     (error: authentication_failed, Claude's api_retry for a 401, Codex's
//     error lines for a 401 or a missing API key variable), and, with
//     Spec.RequirePermissionMode, an init line reporting another mode, end
//     the turn at once.
//   - Cancellation (ctx or Turn.Cancel): SIGINT to the agent's main process,
//     so that it can finish its current step and report, then after
//     Spec.InterruptGrace the core's escalation.
//
// # Error taxonomy
//
// Result.Status is succeeded, failed or cancelled, and Result.ErrorType a
// corral.ErrorType decided in this order, the first rule that applies
// winning:
//
//  1. cancelled by the caller → cancelled (sticky);
//  2. required permission mode not in effect → permission_mode;
//  3. auth failure seen live on stderr or in the stream → auth;
//  4. the agent ended its turn: error_max_turns → max_turns;
//     error_max_budget_usd → max_budget; success without is_error (or
//     turn.completed) → succeeded; otherwise from the agent's error codes
//     and messages auth → rate_limit → model_unsupported, else
//     stream_error (so success with is_error true is a failure, and
//     max_turns never looks like auth);
//  5. a watchdog: stall → stall, idle → idle, budget → timeout;
//  6. the process ended first: killed by a signal corral did not send (an
//     OOM kill included) → signal, never auth; a result segment was seen →
//     rule 4 on it; a quota, rate-limit or model error in the stream →
//     quota, rate_limit or model_unsupported; exit 0 with output but no JSON
//     line → stream_error; exit 0 → empty_result; other exits → crash.
//
// Result.Reason says in a sentence what happened and what to do.
//
// # Salvage
//
// Whatever the outcome, the Result keeps what the stream said: session id,
// model, num_turns, the latest cumulative cost (nil when none was
// reported), the final and the latest per-call usage, the tool-call
// timeline, the final text (secrets redacted), the background tasks still
// live, the model API failure not recovered from, parse errors with a
// sample, the stderr tail, and, with Spec.TranscriptPath, a transcript file
// (bounded, secrets redacted).
//
// # Events
//
// Both formats map to one Event model. Spec.OnEvent sees every event in
// order; Turn.Subscribe hands them out on a channel whose full buffer drops
// (and counts) rather than stall the stream. No event is published after
// Wait has returned.
//
// # Parsing
//
// Lines are split with a bound (Spec.MaxLine): a longer line is cut, read
// up to the cut, and counted. Blank lines are skipped; non-JSON and
// malformed lines are counted with a sample; invalid UTF-8 becomes U+FFFD;
// unknown types and fields are ignored. Only the fields the turn needs are
// decoded, without a regular expression or a full json.Unmarshal per line.
//
// # Reading a stream without a turn
//
// A Turn reads its stream with a Parser, which turns lines into Events, and
// folds the events into a Timeline, from which its Result takes the tool
// calls (Result.Tools), the session id, the model and the agent's errors.
// Both are exported for readers of a stream a Turn did not run, such as a
// transcript or a service's log of a run: a Parser and a Timeline fed the
// same lines give the same account as the Turn did, live or afterwards.
package headless
