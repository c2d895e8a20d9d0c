package headless

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
	"github.com/corralrun/corral/proc"
)

// tracer starts headless's spans, from the provider
// proc.SetTracerProvider describes.
var tracer = tracing.Tracer{Scope: "github.com/corralrun/corral/headless"}

// The span of the turn follows the OpenTelemetry semantic conventions for
// generative AI agents: "invoke_agent {agent}" with gen_ai.* attributes,
// and a child "execute_tool {tool}" per call of the stream's timeline;
// "headless.teardown" covers the end of the turn to the tree gone
// (docs/observability.md).
const spanTeardown = "headless.teardown"

// turnTrace is a turn's part in a trace. turn is the span whatever the
// sampling; the fields below it are set only when it is recorded.
type turnTrace struct {
	turn      trace.Span
	ctx       context.Context // carries turn, and the caller's content setting
	requested string          // the model the command line asked for
	on        bool            // turn is recorded (it was when it started)

	teardown   trace.Span
	tornFrom   time.Time
	lingerGave time.Duration
}

// startTurn starts the turn's span under ctx's.
func startTurn(ctx context.Context, spec *Spec) turnTrace {
	agent := agentName(spec)
	ctx, span := tracer.Start(ctx, "invoke_agent "+agent)
	t := turnTrace{turn: span, ctx: ctx, on: span.IsRecording()}
	if !t.on {
		return t
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", agent),
	}
	if t.requested = requestedModel(spec.Args); t.requested != "" {
		attrs = append(attrs, attribute.String("gen_ai.request.model", t.requested))
	}
	if spec.Label != "" {
		attrs = append(attrs, attribute.String("corral.label", spec.Label))
	}
	if spec.Timeout > 0 {
		attrs = append(attrs, attribute.Int64("corral.timeout_ms", spec.Timeout.Milliseconds()))
	}
	span.SetAttributes(attrs...)
	return t
}

// recording reports whether the turn's span is recorded (telemetry is
// on), from its start to the end of the teardown.
func (t *turnTrace) recording() bool { return t.on }

// procContext is the context the agent's process starts under: the turn's
// span (so its TRACEPARENT names the turn's subtree) and the caller's
// content setting, without the caller's cancellation, which the turn
// handles itself.
func (t *turnTrace) procContext() context.Context { return context.WithoutCancel(t.ctx) }

// startFailed ends the span of a turn whose agent could not start.
func (t *turnTrace) startFailed(err error) {
	if !t.recording() {
		return
	}
	t.turn.RecordError(err)
	t.turn.SetStatus(codes.Error, err.Error())
	t.turn.End()
}

// endTurn records the turn's result and its tool calls, and ends its
// span at the end of the turn.
func (t *turnTrace) endTurn(r *Result, end time.Time) {
	if !t.recording() {
		return
	}
	system := genAISystem(r.Format)
	attrs := []attribute.KeyValue{
		attribute.String("corral.status", string(r.Status)),
		attribute.String("corral.finalized_by", string(r.FinalizedBy)),
		attribute.Int("corral.num_turns", r.NumTurns),
		attribute.Int("corral.tools", len(r.Tools)+r.ToolsDropped),
		attribute.Int64("corral.parse_errors", r.ParseErrors),
	}
	if system != "" {
		attrs = append(attrs, attribute.String("gen_ai.system", system), attribute.String("gen_ai.provider.name", system))
	}
	if r.Model != "" {
		attrs = append(attrs, attribute.String("gen_ai.response.model", r.Model))
		if t.requested == "" { // the agent's default model
			attrs = append(attrs, attribute.String("gen_ai.request.model", r.Model))
		}
	}
	if r.SessionID != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", r.SessionID))
	}
	if r.Subtype != "" {
		attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{r.Subtype}))
	}
	if u := r.Usage; u != nil {
		attrs = append(attrs,
			attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens))
		if n := u.CacheReadInputTokens + u.CachedInputTokens; n > 0 {
			attrs = append(attrs, attribute.Int64("gen_ai.usage.cache_read.input_tokens", n))
		}
		if n := u.CacheCreationInputTokens + u.CacheWriteInputTokens; n > 0 {
			attrs = append(attrs, attribute.Int64("gen_ai.usage.cache_creation.input_tokens", n))
		}
	}
	if r.CostUSD != nil {
		attrs = append(attrs, attribute.Float64("corral.cost_usd", *r.CostUSD))
	}
	if text, ok := tracing.Content(t.ctx, r.Text); ok && text != "" {
		attrs = append(attrs, attribute.String("gen_ai.output.messages", outputMessages(text)))
	}
	if r.ErrorType != "" {
		attrs = append(attrs, attribute.String("error.type", string(r.ErrorType)))
	}
	t.turn.SetAttributes(attrs...)
	t.toolSpans(r, end)
	if !r.Succeeded() {
		t.turn.SetStatus(codes.Error, r.Reason)
	}
	t.turn.End(trace.WithTimestamp(end))
}

// toolSpans records each call of the timeline as a child of the turn (a
// sub-agent's calls as children of the call that started it), with its
// own start and duration.
func (t *turnTrace) toolSpans(r *Result, end time.Time) {
	ctxOf := map[string]context.Context{}
	stalled := ""
	if r.StalledTool != nil {
		stalled = r.StalledTool.ID
	}
	for _, c := range r.Tools {
		parent := t.ctx
		if p, ok := ctxOf[c.ParentID]; ok && c.ParentID != "" {
			parent = p
		}
		start := c.Start
		if start.IsZero() {
			start = end
		}
		ctx, span := tracer.Start(parent, "execute_tool "+c.Name, trace.WithTimestamp(start))
		ctxOf[c.ID] = ctx
		attrs := []attribute.KeyValue{
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", c.Name),
			attribute.String("gen_ai.tool.call.id", c.ID),
			attribute.Bool("corral.tool.open", c.Open),
			attribute.Bool("corral.tool.stalled", c.ID == stalled && stalled != ""),
		}
		if c.StallLimitMS > 0 {
			attrs = append(attrs, attribute.Float64("corral.tool.stall_limit_ms", c.StallLimitMS))
		}
		if d, ok := tracing.Content(t.ctx, c.Detail); ok && d != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", d))
		}
		if c.Error {
			attrs = append(attrs, attribute.String("error.type", "tool_error"))
			msg, _ := tracing.Content(t.ctx, c.ErrorText)
			span.SetStatus(codes.Error, msg)
		}
		if c.ID == stalled && stalled != "" {
			attrs = append(attrs, attribute.String("error.type", "stall"))
			span.SetStatus(codes.Error, "stalled past its limit")
		}
		span.SetAttributes(attrs...)
		span.End(trace.WithTimestamp(start.Add(time.Duration(c.DurationMS * float64(time.Millisecond)))))
	}
}

// beginTeardown starts the teardown's span, with how long the agent may
// take to exit by itself.
func (t *turnTrace) beginTeardown(linger time.Duration) {
	if !t.recording() {
		return
	}
	_, t.teardown = tracer.Start(t.ctx, spanTeardown)
	t.tornFrom, t.lingerGave = time.Now(), linger
}

// endTeardown records how the tree went: by itself within the wait, or
// stopped; what the core killed.
func (t *turnTrace) endTeardown(byItself bool, pr *proc.Result) {
	if t.teardown == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.Int64("corral.linger_ms", t.lingerGave.Milliseconds()),
		attribute.Bool("corral.exited_by_itself", byItself),
		attribute.Int64("corral.teardown_ms", time.Since(t.tornFrom).Milliseconds()),
	}
	if pr != nil {
		attrs = append(attrs,
			attribute.Int("corral.killed", pr.Killed),
			attribute.Int("corral.survivors", pr.Survivors),
			attribute.String("corral.containment", string(pr.Containment)),
			attribute.Int("process.exit.code", pr.ExitCode))
		if pr.Signal != 0 {
			attrs = append(attrs, attribute.String("corral.signal", proc.SignalName(pr.Signal)))
		}
		if pr.Survivors > 0 {
			t.teardown.SetStatus(codes.Error, "processes survived SIGKILL")
		}
	}
	t.teardown.SetAttributes(attrs...)
	t.teardown.End()
}

// agentName names the agent for gen_ai.agent.name: its program's name
// (claude, codex).
func agentName(spec *Spec) string {
	name := strings.TrimSuffix(filepath.Base(spec.Args[0]), ".exe")
	if name == "" || name == "." {
		return "agent"
	}
	return name
}

// genAISystem is the model provider of a stream format.
func genAISystem(f Format) string {
	switch f {
	case FormatClaude:
		return "anthropic"
	case FormatCodex:
		return "openai"
	}
	return ""
}

// requestedModel finds the model the command line asks for (--model M,
// --model=M, -m M).
func requestedModel(args []string) string {
	for i, a := range args {
		switch {
		case (a == "--model" || a == "-m") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--model="):
			return strings.TrimPrefix(a, "--model=")
		}
	}
	return ""
}

// outputMessages is the final answer in the form of gen_ai.output.messages.
func outputMessages(text string) string {
	b, _ := json.Marshal([]map[string]any{{"role": "assistant", "parts": []map[string]string{{"type": "text", "content": text}}}})
	return string(b)
}
