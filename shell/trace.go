package shell

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

// tracer starts the shell tool's spans, from the provider
// proc.SetTracerProvider describes.
var tracer = tracing.Tracer{Scope: "github.com/corralrun/corral/shell"}

// Span names (docs/observability.md).
const (
	spanCommand = "shell.command"
	spanJob     = "shell.job"
)

// commandSpan is one command's span, or nil when it is not recorded.
type commandSpan struct {
	span trace.Span
	ctx  context.Context
}

// traceCommand starts the span of a command or a background job (name),
// under the span ctx carries; the command runs under the returned
// context, so its proc.run span is a child.
func traceCommand(ctx context.Context, name string, req Request, session string) (context.Context, commandSpan) {
	ctx, span := tracer.Start(ctx, name)
	if !span.IsRecording() {
		return ctx, commandSpan{}
	}
	if session != "" {
		span.SetAttributes(attribute.String("corral.shell.session", session))
	}
	if req.Dir != "" {
		span.SetAttributes(attribute.Bool("corral.shell.workdir_given", true))
	}
	if c, ok := tracing.Content(ctx, req.Command); ok {
		span.SetAttributes(attribute.String("corral.shell.command", c))
	}
	return ctx, commandSpan{span: span, ctx: ctx}
}

// end records how the command (or the background job) ended, or the
// error that kept it from running, and ends the span.
func (c commandSpan) end(res *Result, err error) {
	if c.span == nil {
		return
	}
	if err != nil {
		c.span.RecordError(err)
		c.span.SetStatus(codes.Error, err.Error())
		c.span.End()
		return
	}
	c.record(res)
	c.span.End()
}

func (c commandSpan) record(res *Result) {
	if res == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.Int("process.exit.code", res.ExitCode),
		attribute.Bool("corral.timed_out", res.TimedOut),
		attribute.Bool("corral.cancelled", res.Cancelled),
		attribute.Bool("corral.truncated", res.Truncated),
		attribute.Int64("corral.stdout.bytes", res.StdoutBytes),
		attribute.Int64("corral.stderr.bytes", res.StderrBytes),
		attribute.Int64("corral.duration_ms", res.DurationMS),
		attribute.Int("corral.killed", res.Killed),
		attribute.Int("corral.survivors", res.Survivors),
	}
	if res.Signal != "" {
		attrs = append(attrs, attribute.String("corral.signal", res.Signal))
	}
	if res.WaitedMS > 0 {
		attrs = append(attrs, attribute.Int64("corral.waited_ms", res.WaitedMS))
	}
	if res.SessionRestarted {
		attrs = append(attrs, attribute.Bool("corral.shell.session_restarted", true))
	}
	if res.JobID != "" {
		attrs = append(attrs, attribute.String("corral.shell.job", res.JobID))
	}
	if res.Denied {
		attrs = append(attrs, attribute.Bool("corral.shell.denied", true))
		if r, ok := tracing.Content(c.ctx, res.Reason); ok {
			attrs = append(attrs, attribute.String("corral.shell.denied_reason", r))
		}
	}
	if out, ok := tracing.Content(c.ctx, res.Stdout); ok {
		attrs = append(attrs, attribute.String("corral.stdout", out))
	}
	if out, ok := tracing.Content(c.ctx, res.Stderr); ok {
		attrs = append(attrs, attribute.String("corral.stderr", out))
	}
	c.span.SetAttributes(attrs...)
	switch {
	case res.Denied:
		c.span.SetStatus(codes.Error, "denied")
	case res.TimedOut || res.Cancelled || res.ExitCode != 0:
		c.span.SetStatus(codes.Error, res.Status())
	}
}
