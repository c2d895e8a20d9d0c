//go:build unix

package shell

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/corralrun/corral/internal/redact"
	"github.com/corralrun/corral/internal/spantest"
	"github.com/corralrun/corral/internal/tracing"
)

// TestSessionCommandIsASpanAboveItsRun: a session command is a
// shell.command span under the caller's, its proc.run a child of it; the
// command the model sent is not recorded unless content was asked for.
func TestSessionCommandIsASpanAboveItsRun(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	ctx, tr := spantest.Start(t)
	res, err := s.Run(ctx, Request{Command: "echo hi; exit 3"})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	cmd := only(t, tr.Spans(), "shell.command")
	run := only(t, tr.Spans(), "proc.run")
	if cmd.Parent.SpanID() != tr.Parent.SpanID() || run.Parent.SpanID() != cmd.SpanContext.SpanID() {
		t.Errorf("parentage: command under %v, run under %v", cmd.Parent.SpanID(), run.Parent.SpanID())
	}
	if spantest.Attr(cmd, "process.exit.code") != int64(3) || cmd.Status.Code.String() != "Error" || spantest.Attr(cmd, "corral.shell.session") != s.ID() {
		t.Errorf("command span %+v", cmd)
	}
	for _, k := range []string{"corral.shell.command", "corral.stdout", "process.command_line"} {
		if spantest.Attr(cmd, k) != nil || spantest.Attr(run, k) != nil {
			t.Errorf("%s recorded without being asked for", k)
		}
	}
}

// TestCommandContentIsRecordedRedactedWhenAsked: with content asked for,
// the command and its output are recorded, secrets masked.
func TestCommandContentIsRecordedRedactedWhenAsked(t *testing.T) {
	tool, _ := newTool(t)
	ctx, tr := spantest.Start(t)
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	ctx = tracing.WithContent(ctx, redact.New())
	if _, err := tool.Run(ctx, Request{Command: "echo GITHUB_TOKEN=" + secret}); err != nil {
		t.Fatal(err)
	}
	cmd := only(t, tr.Spans(), "shell.command")
	c, _ := spantest.Attr(cmd, "corral.shell.command").(string)
	out, _ := spantest.Attr(cmd, "corral.stdout").(string)
	if !strings.Contains(c, "echo GITHUB_TOKEN=") || !strings.Contains(out, "GITHUB_TOKEN=") {
		t.Errorf("command %q, stdout %q", c, out)
	}
	for _, s := range tr.Spans() {
		for _, kv := range s.Attributes {
			if strings.Contains(kv.Value.Emit(), secret) {
				t.Errorf("span %s attribute %s holds the secret: %q", s.Name, kv.Key, kv.Value.Emit())
			}
		}
	}
}

// TestJobIsASpanUntilItEnds: a background job's span starts under the
// request that started it and ends when the job does.
func TestJobIsASpanUntilItEnds(t *testing.T) {
	tool, _ := newTool(t)
	s := newSession(t, tool)
	ctx, tr := spantest.Start(t)
	res, err := s.Start(ctx, Request{Command: "sleep 30"})
	if err != nil || res.JobID == "" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(spantest.Named(tr.Spans(), "shell.job")) != 0 {
		t.Fatal("the job's span ended while the job runs")
	}
	j, _ := s.Job(res.JobID)
	j.Kill()
	spans := tr.Wait(10*time.Second, func(s []tracetest.SpanStub) bool { return len(spantest.Named(s, "shell.job")) == 1 })
	job := only(t, spans, "shell.job")
	run := only(t, spans, "proc.run")
	if job.Parent.SpanID() != tr.Parent.SpanID() || run.Parent.SpanID() != job.SpanContext.SpanID() {
		t.Errorf("parentage: job under %v, run under %v", job.Parent.SpanID(), run.Parent.SpanID())
	}
	if spantest.Attr(job, "corral.cancelled") != true || spantest.Attr(job, "corral.shell.job") != res.JobID {
		t.Errorf("job span %+v", job)
	}
}

func only(t *testing.T, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	got := spantest.Named(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d %s spans among %d", len(got), name, len(spans))
	}
	return got[0]
}
