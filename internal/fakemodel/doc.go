// Package fakemodel imitates the model APIs that coding agents call —
// Anthropic's Messages API and OpenAI's Responses API — so that the real
// Claude Code and Codex CLIs can run against a scripted model in tests,
// benchmarks and demos: no network, no account, no cost, and the same
// answer every time.
//
// One Server answers both APIs on a loopback port:
//
//   - POST /v1/messages (Claude Code: ANTHROPIC_BASE_URL=Server.URL), a
//     streamed message of Server-Sent Events: message_start,
//     content_block_start/delta/stop for text and tool_use blocks,
//     message_delta with its stop_reason and usage, message_stop; errors
//     in the API's shape ({"type":"error","error":{"type":…}}), with
//     retry-after on 429.
//   - POST /v1/responses (Codex: a model provider whose base_url is
//     Server.URL+"/v1" and whose wire_api is "responses"): response.created,
//     response.output_item.added/done for message and function_call items,
//     response.output_text.delta, response.completed or response.failed;
//     errors as {"error":{"message","type","code"}}.
//
// What the model answers is a Scenario: a function of the request (how
// many model turns the conversation already holds, how often this very
// request was tried, what the tool results said) that returns a Reply —
// words, tool calls, an HTTP failure, a hang mid-stream, or garbage. The
// scenarios agents are tested with are named (see Names and Named), so
// that the demo command (go run ./internal/fakemodel/cmd/fakemodel) and
// the tests speak of the same things.
//
// Every request is recorded with its body, so a test can read what the
// agent sent the model: the tool results as the model sees them, the
// tools it was offered, its retries.
//
// The package is a test double: the product never imports it.
package fakemodel
