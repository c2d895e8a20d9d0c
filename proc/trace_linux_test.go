package proc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/spantest"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/proc"
)

// TestRunGivesTheCommandItsTraceContext: the command sees TRACEPARENT
// naming the run's own span, in the caller's trace, whatever the
// environment mode; an inherited TRACEPARENT is replaced.
func TestRunGivesTheCommandItsTraceContext(t *testing.T) {
	for _, mode := range []corral.EnvMode{corral.EnvInherit, corral.EnvClean} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Setenv("TRACEPARENT", "00-11111111111111111111111111111111-2222222222222222-01")
			ctx, tr := spantest.Start(t)
			tag := testutil.Tag(t)
			spec := bash(tag, `echo "tp=$TRACEPARENT"`)
			spec.Args[0] = "/bin/bash"
			spec.EnvMode = mode
			res, err := proc.Run(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			runs := spantest.Named(tr.Spans(), "proc.run")
			if len(runs) != 1 {
				t.Fatalf("proc.run spans: %+v", tr.Spans())
			}
			sc := runs[0].SpanContext
			want := "tp=00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
			if got := strings.TrimSpace(res.Stdout.Text()); got != want {
				t.Errorf("the command saw %q, want %q", got, want)
			}
			if runs[0].Parent.SpanID() != tr.Parent.SpanID() {
				t.Errorf("proc.run's parent %v, want the caller's %v", runs[0].Parent.SpanID(), tr.Parent.SpanID())
			}
			if spantest.Attr(runs[0], "process.exit.code") != int64(0) || spantest.Attr(runs[0], "process.executable.name") != "bash" {
				t.Errorf("attributes %v", runs[0].Attributes)
			}
			if spantest.Attr(runs[0], "process.command_line") != nil {
				t.Error("the command line was recorded though content was not asked for")
			}
			testutil.AssertNoTagged(t, tag, time.Second)
		})
	}
}

// TestRunUnsampledPassesAnUnsampledTraceContext: a run whose span the
// provider does not sample (here: a root, which the tests' sampler leaves
// out) still gives the command its context, flagged not sampled, so an
// agent sampling by its parent leaves it out too; an inherited
// TRACEPARENT and TRACESTATE are replaced.
func TestRunUnsampledPassesAnUnsampledTraceContext(t *testing.T) {
	spantest.Start(t) // installs the provider
	t.Setenv("TRACEPARENT", "00-11111111111111111111111111111111-2222222222222222-01")
	t.Setenv("TRACESTATE", "vendor=inherited")
	tag := testutil.Tag(t)
	res := run(t, bash(tag, `echo "tp=$TRACEPARENT ts=${TRACESTATE-unset}"`))
	got := strings.TrimSpace(res.Stdout.Text())
	if !strings.HasPrefix(got, "tp=00-") || !strings.HasSuffix(got, "-00 ts=unset") || strings.Contains(got, "1111") {
		t.Errorf("the command saw %q", got)
	}
}

// TestRunSpanRecordsTheTeardown: a command that ignores SIGTERM and times
// out gets a teardown span under its run: the signal, the grace used in
// full, SIGKILL, what was killed, no survivors, the tier.
func TestRunSpanRecordsTheTeardown(t *testing.T) {
	ctx, tr := spantest.Start(t)
	tag := testutil.Tag(t)
	spec := bash(tag, `trap '' TERM; sleep 30 & sleep 30; wait`)
	spec.Timeout = 200 * time.Millisecond
	spec.Grace = 300 * time.Millisecond
	res, err := proc.Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	spans := tr.Spans()
	runs, tds := spantest.Named(spans, "proc.run"), spantest.Named(spans, "proc.teardown")
	if len(runs) != 1 || len(tds) != 1 {
		t.Fatalf("spans %+v", spans)
	}
	td := tds[0]
	if td.Parent.SpanID() != runs[0].SpanContext.SpanID() {
		t.Errorf("teardown's parent is not the run")
	}
	want := map[string]any{
		"corral.teardown.reason": "timeout",
		"corral.signal":          "SIGTERM",
		"corral.sigkill":         true,
		"corral.grace_ms":        int64(300),
		"corral.killed":          int64(res.Killed),
		"corral.survivors":       int64(0),
		"corral.containment":     string(res.Containment),
	}
	for k, v := range want {
		if got := spantest.Attr(td, k); got != v {
			t.Errorf("teardown %s = %v, want %v", k, got, v)
		}
	}
	if used, _ := spantest.Attr(td, "corral.grace_used_ms").(int64); used < 300 {
		t.Errorf("grace used %d ms, want the whole 300 ms grace", used)
	}
	if res.Killed < 2 || spantest.Attr(runs[0], "corral.timed_out") != true || runs[0].Status.Code.String() != "Error" {
		t.Errorf("killed %d, run span %+v", res.Killed, runs[0])
	}
	testutil.AssertNoTagged(t, tag, time.Second)
}

// TestRunSpanNamesAnOOMKill: on the cgroup tier with a memory limit, a
// tree the OOM killer hit says so.
func TestRunSpanNamesAnOOMKill(t *testing.T) {
	ctx, tr := spantest.Start(t)
	tag := testutil.Tag(t)
	spec := bash(tag, `head -c 400000000 /dev/zero | tail -c 1 >/dev/null; echo survived`)
	spec.Containment = corral.ContainmentCgroup
	spec.Limits = proc.Limits{Memory: 32 << 20}
	res, err := proc.Run(ctx, spec)
	if err != nil {
		t.Skipf("SKIP: the cgroup tier is not available here: %v", err)
	}
	if !strings.Contains(res.LimitsNote, "memory") || strings.Contains(res.LimitsNote, "not") {
		t.Skipf("SKIP: no memory controller for the run here: %q", res.LimitsNote)
	}
	runs := spantest.Named(tr.Spans(), "proc.run")
	if len(runs) != 1 {
		t.Fatalf("spans %+v", tr.Spans())
	}
	if n, _ := spantest.Attr(runs[0], "corral.oom_kills").(int64); n < 1 {
		t.Errorf("oom kills %v (limits note %q, output %q, exit %d)", spantest.Attr(runs[0], "corral.oom_kills"), res.LimitsNote, res.Stdout.Text(), res.ExitCode)
	}
}
