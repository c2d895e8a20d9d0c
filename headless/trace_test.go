package headless_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/spantest"
)

// spansOf waits for the turn's spans through its teardown.
func spansOf(t *testing.T, tr *spantest.Trace) []tracetest.SpanStub {
	t.Helper()
	return tr.Wait(10*time.Second, func(s []tracetest.SpanStub) bool { return len(spantest.Named(s, "headless.teardown")) == 1 })
}

func one(t *testing.T, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	got := spantest.Named(spans, name)
	if len(got) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d %q spans among %v", len(got), name, names)
	}
	return got[0]
}

// TestTracedTurnIsASpanTree: a turn is an invoke_agent span with the
// GenAI conventions' attributes under the caller's span; each tool call
// of the timeline, the agent's process and the teardown are its children;
// the agent saw TRACEPARENT in the same trace.
func TestTracedTurnIsASpanTree(t *testing.T) {
	ctx, tr := spantest.Start(t)
	spec := agent(t, "success", "-echo-env", "TRACEPARENT")
	turn := start(t, ctx, spec)
	final, err := turn.Close()
	if err != nil || !final.Succeeded() {
		t.Fatalf("%+v %v", final, err)
	}
	spans := spansOf(t, tr)
	root := one(t, spans, "invoke_agent fakeagent")
	tool := one(t, spans, "execute_tool Bash")
	run := one(t, spans, "proc.run")
	td := one(t, spans, "headless.teardown")
	if root.Parent.SpanID() != tr.Parent.SpanID() {
		t.Errorf("the turn is not under the caller's span")
	}
	for _, s := range []tracetest.SpanStub{tool, run, td} {
		if s.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s is not a child of the turn", s.Name)
		}
	}
	want := map[string]any{
		"gen_ai.operation.name":      "invoke_agent",
		"gen_ai.system":              "anthropic",
		"gen_ai.request.model":       "claude-sonnet-4-5",
		"gen_ai.response.model":      "claude-sonnet-4-5",
		"gen_ai.usage.input_tokens":  int64(120),
		"gen_ai.usage.output_tokens": int64(450),
		"gen_ai.conversation.id":     final.SessionID,
		"corral.finalized_by":        "result",
	}
	for k, v := range want {
		if got := spantest.Attr(root, k); got != v {
			t.Errorf("turn %s = %v, want %v", k, got, v)
		}
	}
	if spantest.Attr(tool, "gen_ai.tool.name") != "Bash" || spantest.Attr(tool, "gen_ai.tool.call.id") != "toolu_1" || spantest.Attr(tool, "corral.tool.stalled") != false {
		t.Errorf("tool span %v", tool.Attributes)
	}
	if spantest.Attr(root, "gen_ai.output.messages") != nil || spantest.Attr(tool, "gen_ai.tool.call.arguments") != nil {
		t.Error("content was recorded without being asked for")
	}
	id := root.SpanContext.TraceID().String()
	if !strings.Contains(final.Text, "00-"+id+"-"+run.SpanContext.SpanID().String()+"-01") {
		t.Errorf("the agent's TRACEPARENT is not the run's span in trace %s: %q", id, final.Text)
	}
}

// TestStalledToolCallSpanSaysSo: the call that tripped the stall watchdog
// is an open, stalled, failed span.
func TestStalledToolCallSpanSaysSo(t *testing.T) {
	ctx, tr := spantest.Start(t)
	spec := agent(t, "hung-mcp")
	spec.StallTimeout = 300 * time.Millisecond
	turn := start(t, ctx, spec)
	final, _ := turn.Close()
	if final.FinalizedBy != headless.FinalizedByStall {
		t.Fatalf("finalized by %s", final.FinalizedBy)
	}
	spans := spansOf(t, tr)
	tool := one(t, spans, "execute_tool mcp__slack__post_message")
	if spantest.Attr(tool, "corral.tool.stalled") != true || spantest.Attr(tool, "corral.tool.open") != true || tool.Status.Code.String() != "Error" {
		t.Errorf("tool span %+v", tool)
	}
	root := one(t, spans, "invoke_agent fakeagent")
	if spantest.Attr(root, "error.type") != "stall" || root.Status.Code.String() != "Error" {
		t.Errorf("turn span %v %v", root.Attributes, root.Status)
	}
}

// TestTracedTurnGivesTheAgentItsFlushWindow: after its result the agent
// takes 1.5 s to exit (an exporter flushing), longer than the 200 ms
// linger: traced, it gets the flush window and exits by itself; untraced,
// it is stopped at the linger, as before. The result comes at the end of
// the turn either way, and the teardown stays within the window's bound.
func TestTracedTurnGivesTheAgentItsFlushWindow(t *testing.T) {
	for _, traced := range []bool{true, false} {
		name := map[bool]string{true: "traced", false: "untraced"}[traced]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var tr *spantest.Trace
			if traced {
				ctx, tr = spantest.Start(t)
			}
			spec := agent(t, "linger", "-hold=false", "-linger", "1500ms")
			spec.Linger = 200 * time.Millisecond
			turn := start(t, ctx, spec)
			r, _ := turn.Wait()
			ended := time.Now()
			final, err := turn.Close()
			took := time.Since(ended)
			if err != nil || !r.Succeeded() {
				t.Fatalf("%+v %v", r, err)
			}
			if traced {
				if final.Process.Killed != 0 || final.ExitCode != 0 {
					t.Errorf("the traced agent was stopped (killed %d, exit %d, signal %q) before its flush", final.Process.Killed, final.ExitCode, final.Signal)
				}
				if bound := headless.DefaultFlushWindow + 2*time.Second; took > bound {
					t.Errorf("teardown took %v, beyond the window's bound %v", took, bound)
				}
				td := one(t, spansOf(t, tr), "headless.teardown")
				if spantest.Attr(td, "corral.exited_by_itself") != true || spantest.Attr(td, "corral.linger_ms") != headless.DefaultFlushWindow.Milliseconds() {
					t.Errorf("teardown span %v", td.Attributes)
				}
				return
			}
			if final.Process.Killed == 0 {
				t.Errorf("the untraced agent was not stopped at the linger (exit %d)", final.ExitCode)
			}
			if took > time.Second+spec.Grace {
				t.Errorf("untraced teardown took %v", took)
			}
		})
	}
}
