package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/otlpsink"
	"github.com/corralrun/corral/internal/testutil"
)

// submitTraced submits input to agent over the API of the service at
// addr with the caller's traceparent header, and returns the execution.
func submitTraced(t *testing.T, addr, token, agent, input, traceparent string) *client.Execution {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"input": input})
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/agents/"+agent+"/tasks", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
		req.Header.Set("tracestate", "caller=1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e client.Execution
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d %v", resp.StatusCode, err)
	}
	return &e
}

// flakyAgent is an agent whose first attempt is rate limited and whose
// retry makes a tool call (testutil.FlakyAgent), on workers with labels.
func flakyAgent(t *testing.T, labels ...string) *client.Agent {
	counter := filepath.Join(t.TempDir(), "turns")
	return &client.Agent{Name: "flaky", Kind: corral.KindHeadless, Labels: labels, MaxParallelTasks: 2,
		Retry:   corral.Retry{MaxAttempts: 2, RetryBackoff: corral.Duration(10 * time.Millisecond)},
		Command: []string{"bash", "-c", testutil.FlakyAgent, "agent", counter, "{{prompt}}"}}
}

// TestOTLPServeRunIsOneTraceAcrossItsRetryAndWorkers: corral serve with
// telemetry, a task submitted with a traceparent header, its first
// attempt rate limited and retried: one trace in a real OTLP receiver,
// the caller's. The submission is a child of the caller's span; both
// attempts' executions are children of the submission, each with its
// wait in the queue and its turn; the second turn's tool call, the
// turns' teardowns and agent processes are children of their turns; the
// agent saw TRACEPARENT in the trace. On a PostgreSQL fleet the task is
// submitted to one worker and run, both attempts, by another (its agent
// requires a label only that one has).
func TestOTLPServeRunIsOneTraceAcrossItsRetryAndWorkers(t *testing.T) {
	withExporter(t)
	check := func(t *testing.T, sink *otlpsink.Sink, c *client.Client, submitted *client.Execution, runner string) {
		first := waitTerminal(t, c, submitted.ID, time.Minute)
		if first.ErrorType != corral.ErrorRateLimit || first.RetriedBy == "" {
			t.Fatalf("attempt 1: %s %s %q, retried by %q", first.Status, first.ErrorType, first.Error, first.RetriedBy)
		}
		if runner == "" { // the one worker
			runner = first.WorkerID
		}
		second := waitTerminal(t, c, first.RetriedBy, time.Minute)
		if second.Status != corral.StatusSucceeded || second.WorkerID != runner || first.WorkerID != runner {
			t.Fatalf("attempt 2: %s %q on %s (attempt 1 on %s), want both on %s", second.Status, second.Error, second.WorkerID, first.WorkerID, runner)
		}
		spans, ok := sink.Wait(30*time.Second, func(s []otlpsink.Span) bool {
			return len(otlpsink.Named(s, "service.execution")) == 2 && len(otlpsink.Named(s, "headless.teardown")) == 2
		})
		if !ok {
			t.Fatalf("spans: %v", names(spans))
		}
		for _, s := range spans {
			if s.TraceID != callerTrace {
				t.Errorf("span %s in trace %s, not the caller's", s.Name, s.TraceID)
			}
		}
		sub := only(t, spans, "service.submit")
		if sub.ParentID != callerSpan || sub.Attrs["corral.execution.id"] != first.ID {
			t.Errorf("submission: parent %s, attrs %v", sub.ParentID, sub.Attrs)
		}
		for _, x := range otlpsink.Named(spans, "service.execution") {
			if x.ParentID != sub.SpanID || x.Attrs["corral.worker.id"] != runner {
				t.Errorf("execution %v (attempt %v) under %s on %v, want under the submission on %s", x.Attrs["corral.execution.id"], x.Attrs["corral.attempt"], x.ParentID, x.Attrs["corral.worker.id"], runner)
			}
			kids := names(otlpsink.Children(spans, x.SpanID))
			if strings.Join(kids, ",") != "invoke_agent bash,service.queue" {
				t.Errorf("attempt %v's children: %v", x.Attrs["corral.attempt"], kids)
			}
			turn := otlpsink.Named(otlpsink.Children(spans, x.SpanID), "invoke_agent bash")[0]
			below := strings.Join(names(otlpsink.Children(spans, turn.SpanID)), ",")
			want := "headless.teardown,proc.run"
			if x.Attrs["corral.attempt"] == int64(2) {
				want = "execute_tool Bash," + want
				if x.Attrs["corral.status"] != "succeeded" || x.Attrs["corral.retry_of"] != first.ID || x.Attrs["gen_ai.usage.input_tokens"] != int64(120) {
					t.Errorf("attempt 2: %v", x.Attrs)
				}
			} else if x.Status != "Error" || x.Attrs["error.type"] != "rate_limit" || x.Attrs["corral.retried_by"] != second.ID {
				t.Errorf("attempt 1: %s %v", x.Status, x.Attrs)
			}
			if below != want {
				t.Errorf("under attempt %v's turn: %s, want %s", x.Attrs["corral.attempt"], below, want)
			}
		}
		if !strings.Contains(second.Result, "tp=00-"+callerTrace+"-") || !strings.HasPrefix(second.TraceParent, "00-"+callerTrace+"-"+sub.SpanID) || second.TraceState != "caller=1" {
			t.Errorf("the agent saw %q; the record keeps %q %q", second.Result, second.TraceParent, second.TraceState)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		sink := otlpsink.Start(t)
		s := startServe(t, t.TempDir(), testutil.Tag(t), "--otel-endpoint", sink.HTTP)
		createAgent(t, s.c, flakyAgent(t))
		e := submitTraced(t, s.addr, s.token, "flaky", "go", "00-"+callerTrace+"-"+callerSpan+"-01")
		check(t, sink, s.c, e, "")
		s.stop()
		testutil.AssertNoTagged(t, s.tag, 10*time.Second)
	})
	t.Run("postgres-fleet", func(t *testing.T) {
		sink := otlpsink.Start(t)
		f := newFleet(t, 0)
		f.args = []string{"--otel-endpoint", sink.GRPC, "--otel-protocol", "grpc"}
		f.start(0, t.TempDir())
		f.args = append(f.args, "--labels", "traced")
		f.start(1, t.TempDir())
		submitter := f.workers[0]
		createAgent(t, submitter.c, flakyAgent(t, "traced"))
		e := submitTraced(t, submitter.addr, submitter.token, "flaky", "go", "00-"+callerTrace+"-"+callerSpan+"-01")
		check(t, sink, submitter.c, e, "w1")
		for _, w := range f.workers {
			w.stop()
		}
		testutil.AssertNoTagged(t, f.tag, 10*time.Second)
	})
}

// TestServeWithoutTelemetryPassesNoTraceContext: without an endpoint the
// service takes no trace context from a submission: its record keeps
// none and its command gets no TRACEPARENT.
func TestServeWithoutTelemetryPassesNoTraceContext(t *testing.T) {
	s := startServe(t, t.TempDir(), testutil.Tag(t))
	createAgent(t, s.c, &client.Agent{Name: "sh"})
	e := submitTraced(t, s.addr, s.token, "sh", `echo "tp=${TRACEPARENT-none}"`, "00-"+callerTrace+"-"+callerSpan+"-01")
	e = waitTerminal(t, s.c, e.ID, time.Minute)
	if e.TraceParent != "" || strings.TrimSpace(e.Stdout) != "tp=none" {
		t.Errorf("trace context %q; the command saw %q", e.TraceParent, e.Stdout)
	}
}

// names returns the spans' names, sorted.
func names(spans []otlpsink.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}
