package service_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/spantest"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/service"
	"github.com/corralrun/corral/store/storetest"
)

// only returns the one span of that name, or fails.
func only(t *testing.T, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	got := spantest.Named(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d spans %q, want 1 (of %d)", len(got), name, len(spans))
	}
	return got[0]
}

func childrenOf(spans []tracetest.SpanStub, parent tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.SpanID() == parent.SpanContext.SpanID() {
			out = append(out, s)
		}
	}
	return out
}

// TestTracedRunIsOneTraceAcrossItsRetry: with Trace on, a task submitted
// under the caller's span is one trace: its submission a child of the
// caller's span; both attempts' executions (the first rate limited, the
// second its retry) children of the submission, each with its wait in
// the queue; below each the turn, with its teardown, and below the
// second the turn's tool call; the agent saw TRACEPARENT in the trace.
// Both records keep the submission's trace context.
func TestTracedRunIsOneTraceAcrossItsRetry(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend storetest.Backend) {
		f := newFixture(t, backend, service.Config{Trace: true})
		counter := filepath.Join(t.TempDir(), "turns")
		f.agent(corral.Agent{Name: "fl", Kind: corral.KindHeadless, Retry: corral.Retry{MaxAttempts: 2, RetryBackoff: corral.Duration(10 * time.Millisecond)},
			Command: []string{"bash", "-c", testutil.FlakyAgent, "agent", counter, "{{prompt}}"}})
		ctx, tr := spantest.Start(t)
		e, err := f.svc.Submit(ctx, service.Task{Agent: "fl", Input: "go"})
		if err != nil {
			t.Fatal(err)
		}
		first := f.waitTerminal(e.ID, 30*time.Second)
		if first.ErrorType != corral.ErrorRateLimit || first.RetriedBy == "" {
			t.Fatalf("attempt 1: %s %s %q, retried by %q", first.Status, first.ErrorType, first.Error, first.RetriedBy)
		}
		second := f.waitTerminal(first.RetriedBy, 30*time.Second)
		if second.Status != corral.StatusSucceeded {
			t.Fatalf("attempt 2: %s %q", second.Status, second.Error)
		}
		spans := tr.Wait(20*time.Second, func(s []tracetest.SpanStub) bool {
			return len(spantest.Named(s, "service.execution")) == 2 && len(spantest.Named(s, "headless.teardown")) == 2
		})
		sub := only(t, spans, "service.submit")
		if sub.Parent.SpanID() != tr.Parent.SpanID() {
			t.Errorf("the submission's parent is %v, want the caller's span", sub.Parent.SpanID())
		}
		tid := tr.Parent.TraceID().String()
		for _, rec := range []*corral.Execution{first, second} {
			if !strings.Contains(rec.TraceParent, "-"+sub.SpanContext.SpanID().String()+"-") || !strings.Contains(rec.TraceParent, tid) {
				t.Errorf("attempt %d keeps trace context %q, want the submission's span %s", rec.Attempt, rec.TraceParent, sub.SpanContext.SpanID())
			}
		}
		execs := spantest.Named(spans, "service.execution")
		byAttempt := map[int64]tracetest.SpanStub{}
		for _, x := range execs {
			if x.Parent.SpanID() != sub.SpanContext.SpanID() {
				t.Errorf("execution %v is not a child of the submission", spantest.Attr(x, "corral.execution.id"))
			}
			byAttempt[spantest.Attr(x, "corral.attempt").(int64)] = x
		}
		one, two := byAttempt[1], byAttempt[2]
		if spantest.Attr(one, "error.type") != "rate_limit" || spantest.Attr(one, "corral.retried_by") != second.ID ||
			spantest.Attr(two, "corral.status") != "succeeded" || spantest.Attr(two, "corral.trigger") != "retry" || spantest.Attr(two, "corral.retry_of") != first.ID ||
			spantest.Attr(two, "gen_ai.usage.output_tokens") != int64(450) || spantest.Attr(two, "corral.cost_usd") != 0.2 {
			t.Errorf("attempt 1 %v\nattempt 2 %v", one.Attributes, two.Attributes)
		}
		for n, x := range byAttempt {
			var names []string
			for _, c := range childrenOf(spans, x) {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != "service.queue,invoke_agent bash" && strings.Join(names, ",") != "invoke_agent bash,service.queue" {
				t.Errorf("attempt %d's children: %v", n, names)
			}
		}
		turn := childrenOf(spans, two)
		var turnSpan tracetest.SpanStub
		for _, c := range turn {
			if c.Name == "invoke_agent bash" {
				turnSpan = c
			}
		}
		var below []string
		for _, c := range childrenOf(spans, turnSpan) {
			below = append(below, c.Name)
		}
		if !strings.Contains(strings.Join(below, ","), "execute_tool Bash") || !strings.Contains(strings.Join(below, ","), "headless.teardown") {
			t.Errorf("under the second turn: %v", below)
		}
		if !strings.Contains(second.Result, "tp=00-"+tid+"-") {
			t.Errorf("the agent saw no TRACEPARENT in the trace %s: %q", tid, second.Result)
		}
	})
}

// TestUntracedServiceIgnoresTheTraceContext: with Trace off, a task
// submitted under a sampled span records nothing in its trace, keeps no
// trace context, and its command is not in that trace. (Without any
// TracerProvider, as corral serve without telemetry, the command gets no
// TRACEPARENT at all: cmd/corral's tests.)
func TestUntracedServiceIgnoresTheTraceContext(t *testing.T) {
	f := newFixture(t, storetest.Backends()[0], service.Config{})
	f.agent(corral.Agent{Name: "sh"})
	ctx, tr := spantest.Start(t)
	e, err := f.svc.Submit(ctx, service.Task{Agent: "sh", Input: `echo "tp=${TRACEPARENT-none}"`})
	if err != nil {
		t.Fatal(err)
	}
	e = f.waitTerminal(e.ID, 30*time.Second)
	if e.TraceParent != "" || strings.Contains(e.Stdout, tr.Parent.TraceID().String()) {
		t.Errorf("trace context %q, command saw %q", e.TraceParent, e.Stdout)
	}
	if s := tr.Spans(); len(s) != 0 {
		t.Errorf("%d spans recorded with tracing off: %v", len(s), s[0].Name)
	}
}

// TestEachScheduleFireIsATraceOfItsOwn: with Trace on, every fire of a
// schedule has a new trace, and its command runs in it.
func TestEachScheduleFireIsATraceOfItsOwn(t *testing.T) {
	spantest.Start(t) // the provider: roots unsampled, with their context
	f := newFixture(t, storetest.Backends()[0], service.Config{Trace: true})
	f.agent(corral.Agent{Name: "cron", MaxParallelTasks: 5})
	if _, err := f.svc.CreateSchedule(bg, &corral.Schedule{Agent: "cron", Cron: "* * * * * *", Input: `echo "tp=$TRACEPARENT"`, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	var execs []*corral.Execution
	testutil.WaitFor(t, 15*time.Second, "two scheduled fires", func() bool {
		execs, _, _ = f.svc.Executions(bg, service.ExecutionFilter{Agent: "cron"})
		return len(execs) >= 2
	})
	traces := map[string]bool{}
	for _, e := range execs[:2] {
		e = f.waitTerminal(e.ID, 20*time.Second)
		parts := strings.Split(e.TraceParent, "-")
		if len(parts) != 4 || !strings.Contains(e.Stdout, "tp=00-"+parts[1]+"-") {
			t.Fatalf("fire %s: trace context %q, its command saw %q", e.ID, e.TraceParent, e.Stdout)
		}
		traces[parts[1]] = true
	}
	if len(traces) != 2 {
		t.Errorf("two fires share a trace: %v", traces)
	}
	sc, _, _ := f.svc.Schedules(bg, service.ScheduleFilter{Agent: "cron"})
	sc[0].Enabled = false
	f.svc.UpdateSchedule(bg, sc[0])
	all, _, _ := f.svc.Executions(bg, service.ExecutionFilter{Agent: "cron", Limit: 100})
	for _, e := range all {
		f.waitTerminal(e.ID, 20*time.Second)
	}
}
