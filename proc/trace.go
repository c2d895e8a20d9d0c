package proc

import (
	"context"
	"path/filepath"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

// tracer starts proc's spans, from the provider SetTracerProvider
// describes.
var tracer = tracing.Tracer{Scope: "github.com/corralrun/corral/proc"}

// Span names and the attributes proc records (docs/observability.md).
const (
	spanRun      = "proc.run"
	spanTeardown = "proc.teardown"
)

// runTrace is a run's part in a trace: the run's span, under whatever
// span the caller's context carries, and a child span for the tree's
// teardown when there was one. With no provider (SetTracerProvider), or
// a span not sampled, run is nil and every method returns at once.
type runTrace struct {
	run      trace.Span
	teardown trace.Span

	signal     syscall.Signal
	signalled  time.Time // the stop signal went to the tree
	killed     time.Time // SIGKILL went to the tree
	gone       time.Time // the tree was gone within the grace
	reason     string
	oomKills   int
	graceGiven time.Duration
}

// start starts the run's span and returns the context the command's
// trace context comes from (its TRACEPARENT names the run's span; a span
// that is not recorded still carries its caller's context).
func (t *runTrace) start(ctx context.Context, spec *Spec, path string) context.Context {
	ctx, span := tracer.Start(ctx, spanRun)
	if !span.IsRecording() {
		return ctx
	}
	t.run = span
	attrs := []attribute.KeyValue{
		attribute.String("process.executable.name", filepath.Base(path)),
		attribute.String("corral.containment.requested", string(spec.Containment)),
	}
	if spec.Label != "" {
		attrs = append(attrs, attribute.String("corral.label", spec.Label))
	}
	if spec.Timeout > 0 {
		attrs = append(attrs, attribute.Int64("corral.timeout_ms", spec.Timeout.Milliseconds()))
	}
	if spec.Sandbox.Enabled() {
		attrs = append(attrs, attribute.String("corral.sandbox.mode", string(spec.Sandbox.Mode)))
	}
	if tracing.Recording(ctx) { // a shell's arguments hold its whole wrapper: join them only then
		args, _ := tracing.Content(ctx, joinArgs(spec.Args))
		attrs = append(attrs, attribute.String("process.command_line", args))
	}
	span.SetAttributes(attrs...)
	return ctx
}

// started records what Start learnt of the run.
func (t *runTrace) started(r *Result) {
	if t.run == nil {
		return
	}
	t.run.SetAttributes(
		attribute.Int("process.pid", r.Pid),
		attribute.String("corral.containment", string(r.Containment)),
		attribute.String("corral.binding", r.Binding),
	)
}

// startFailed ends the span of a run that could not start.
func (t *runTrace) startFailed(err error) {
	if t.run == nil {
		return
	}
	t.run.RecordError(err)
	t.run.SetStatus(codes.Error, err.Error())
	t.run.End()
}

// beginTeardown starts the teardown's span; p.res says why (timed out,
// cancelled, or leftovers after the main process exited).
func (t *runTrace) beginTeardown(p *Process) {
	if t.run == nil || t.teardown != nil {
		return
	}
	switch {
	case p.res.TimedOut:
		t.reason = "timeout"
	case p.res.Cancelled:
		t.reason = "cancelled"
	default:
		t.reason = "leftovers"
	}
	t.graceGiven = p.spec.grace()
	ctx := trace.ContextWithSpan(context.Background(), t.run)
	_, t.teardown = tracer.Start(ctx, spanTeardown)
}

// sentSignal records the stop signal going to the tree.
func (t *runTrace) sentSignal(sig syscall.Signal) {
	if t.teardown != nil {
		t.signal, t.signalled = sig, time.Now()
	}
}

// treeGone records the tree gone within the grace.
func (t *runTrace) treeGone() {
	if t.teardown != nil {
		t.gone = time.Now()
	}
}

// sentKill records SIGKILL going to the tree.
func (t *runTrace) sentKill() {
	if t.teardown != nil {
		t.killed = time.Now()
	}
}

// recording reports whether the run is traced.
func (t *runTrace) recording() bool { return t.run != nil }

// end ends the teardown's span, if any, and the run's, with the result.
func (t *runTrace) end(r *Result, err error) {
	if t.run == nil {
		return
	}
	common := []attribute.KeyValue{
		attribute.Int("corral.killed", r.Killed),
		attribute.Int("corral.survivors", r.Survivors),
		attribute.String("corral.containment", string(r.Containment)),
	}
	if t.oomKills > 0 {
		common = append(common, attribute.Int("corral.oom_kills", t.oomKills))
	}
	if t.teardown != nil {
		t.endTeardown(r, common)
	}
	attrs := append(common[:len(common):len(common)],
		attribute.Int("process.exit.code", r.ExitCode),
		attribute.Bool("corral.timed_out", r.TimedOut),
		attribute.Bool("corral.cancelled", r.Cancelled),
		attribute.Int64("corral.stdout.bytes", r.Stdout.Bytes),
		attribute.Int64("corral.stderr.bytes", r.Stderr.Bytes),
		attribute.Int64("corral.duration_ms", r.Duration.Milliseconds()),
	)
	if r.Signal != 0 {
		attrs = append(attrs, attribute.String("corral.signal", SignalName(r.Signal)))
	}
	if r.Detached > 0 {
		attrs = append(attrs, attribute.Int("corral.detached", r.Detached))
	}
	if r.Sandbox != nil {
		attrs = append(attrs, attribute.StringSlice("corral.sandbox.mechanisms", r.Sandbox.Mechanisms))
	}
	t.run.SetAttributes(attrs...)
	switch {
	case err != nil:
		t.run.RecordError(err)
		t.run.SetStatus(codes.Error, err.Error())
	case !r.Success():
		t.run.SetStatus(codes.Error, r.Status())
	}
	t.run.End()
}

func (t *runTrace) endTeardown(r *Result, common []attribute.KeyValue) {
	attrs := append(common[:len(common):len(common)],
		attribute.String("corral.teardown.reason", t.reason),
		attribute.Int64("corral.grace_ms", t.graceGiven.Milliseconds()),
		attribute.Bool("corral.sigkill", !t.killed.IsZero()),
	)
	if t.signal != 0 {
		attrs = append(attrs, attribute.String("corral.signal", SignalName(t.signal)))
		used := t.killed
		if used.IsZero() {
			used = t.gone
		}
		if !used.IsZero() {
			attrs = append(attrs, attribute.Int64("corral.grace_used_ms", used.Sub(t.signalled).Milliseconds()))
		}
	}
	if r.SurvivorNote != "" {
		attrs = append(attrs, attribute.String("corral.survivor_note", r.SurvivorNote))
	}
	t.teardown.SetAttributes(attrs...)
	if r.Survivors > 0 {
		t.teardown.SetStatus(codes.Error, "processes survived SIGKILL")
	}
	t.teardown.End()
}

func joinArgs(args []string) string {
	n := 0
	for _, a := range args {
		n += len(a) + 1
	}
	b := make([]byte, 0, n)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a...)
	}
	return string(b)
}
