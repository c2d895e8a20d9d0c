package service

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/tracing"
	"github.com/corralrun/corral/store"
)

// tracer starts the service's spans, from the provider
// proc.SetTracerProvider describes.
var tracer = tracing.Tracer{Scope: "github.com/corralrun/corral/service"}

// The service's spans (docs/observability.md): a submission, and each
// attempt's execution with its wait in the queue as a child; the turn or
// the process tree of the run is the execution's child.
const (
	spanSubmit    = "service.submit"
	spanExecution = "service.execution"
	spanQueue     = "service.queue"
)

// submitTrace is a submission's span; the zero value (the service does
// not trace) does nothing.
type submitTrace struct{ span trace.Span }

// startSubmit starts the span of submission sub, when the service traces,
// and makes it the trace context sub keeps for its execution: a child of
// ctx's span (the submitter's traceparent), else of parent (a retry's
// run), else the root of a new trace (newRoot: always, as for each fire
// of a schedule).
func (s *Service) startSubmit(ctx context.Context, sub *store.Submission, parent *corral.Execution, newRoot bool) submitTrace {
	if !s.cfg.Trace {
		return submitTrace{}
	}
	var opts []trace.SpanStartOption
	switch {
	case newRoot:
		opts = append(opts, trace.WithNewRoot())
	case !trace.SpanContextFromContext(ctx).IsValid() && parent != nil:
		ctx = tracing.FromHeader(ctx, parent.TraceParent, parent.TraceState)
	}
	_, span := tracer.Start(ctx, spanSubmit, opts...)
	if sc := span.SpanContext(); sc.IsValid() { // no provider: no context
		sub.TraceParent, sub.TraceState = tracing.Traceparent(sc), sc.TraceState().String()
	}
	if span.IsRecording() {
		attrs := []attribute.KeyValue{
			attribute.String("corral.agent", sub.Agent),
			attribute.String("corral.trigger", string(sub.Trigger)),
		}
		if sub.ScheduleID != "" {
			attrs = append(attrs, attribute.String("corral.schedule.id", sub.ScheduleID))
		}
		if sub.RetryOf != "" {
			attrs = append(attrs, attribute.String("corral.retry_of", sub.RetryOf), attribute.Int("corral.attempt", sub.Attempt))
		}
		span.SetAttributes(attrs...)
	}
	return submitTrace{span: span}
}

// end ends the submission's span with what was decided: the execution
// (running, queued or rejected), or the error that refused it.
func (t submitTrace) end(e *corral.Execution, err error) {
	if t.span == nil {
		return
	}
	if e != nil && t.span.IsRecording() {
		t.span.SetAttributes(attribute.String("corral.execution.id", e.ID), attribute.String("corral.status", string(e.Status)))
	}
	if err != nil {
		t.span.SetStatus(codes.Error, err.Error())
	}
	t.span.End()
}

// execTrace is an execution's span on the worker that runs it; the zero
// value (the service does not trace) does nothing.
type execTrace struct {
	span trace.Span
	ctx  context.Context // carries span
}

// startExecution starts the span of execution r, claimed by this worker
// at claimed, under the trace context it was submitted with (a new trace
// when it has none), from its creation on; its wait for a slot and for
// its time (a retry's backoff) is a child span, from its creation to its
// claim. It returns the context the run goes on under: ctx with the span.
func (s *Service) startExecution(ctx context.Context, r *store.Run, claimed time.Time) (context.Context, execTrace) {
	if !s.cfg.Trace {
		return ctx, execTrace{}
	}
	e := r.Execution
	ctx, span := tracer.Start(runTrace(ctx, e), spanExecution, trace.WithTimestamp(e.CreatedAt))
	t := execTrace{span: span, ctx: ctx}
	if !span.IsRecording() {
		return ctx, t
	}
	span.SetAttributes(executionAttrs(e, s.id)...)
	_, q := tracer.Start(ctx, spanQueue, trace.WithTimestamp(e.CreatedAt))
	attrs := []attribute.KeyValue{attribute.Int64("corral.queue_ms", claimed.Sub(e.CreatedAt).Milliseconds())}
	if at := e.AdmittedAt; at != nil && at.After(e.CreatedAt) {
		attrs = append(attrs, attribute.Int64("corral.admit_wait_ms", at.Sub(e.CreatedAt).Milliseconds()))
		q.AddEvent("admitted", trace.WithTimestamp(*at))
	}
	q.SetAttributes(attrs...)
	q.End(trace.WithTimestamp(claimed))
	return ctx, t
}

// executionAttrs are what the span of execution e, run by worker, says
// of it from its start.
func executionAttrs(e *corral.Execution, worker string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("corral.execution.id", e.ID),
		attribute.String("corral.agent", e.Agent),
		attribute.String("corral.trigger", string(e.Trigger)),
		attribute.Int("corral.attempt", e.Attempt),
		attribute.String("corral.worker.id", worker),
	}
	if e.MaxAttempts > 0 {
		attrs = append(attrs, attribute.Int("corral.max_attempts", e.MaxAttempts))
	}
	if e.RetryOf != "" {
		attrs = append(attrs, attribute.String("corral.retry_of", e.RetryOf))
	}
	if e.ScheduleID != "" {
		attrs = append(attrs, attribute.String("corral.schedule.id", e.ScheduleID))
	}
	if e.ResumeSession != "" {
		attrs = append(attrs, attribute.Bool("corral.resumed", true))
	}
	return attrs
}

// recoveredExecution is the span of an execution that a dead worker ran
// and this one records as it ended: from its start (its creation, if it
// never started) to now, marked as recovered.
func (s *Service) recoveredExecution(e *corral.Execution) execTrace {
	if !s.cfg.Trace {
		return execTrace{}
	}
	from := e.CreatedAt
	if e.StartedAt != nil {
		from = *e.StartedAt
	}
	ctx, span := tracer.Start(runTrace(context.Background(), e), spanExecution, trace.WithTimestamp(from))
	if span.IsRecording() {
		span.SetAttributes(append(executionAttrs(e, e.WorkerID), attribute.Bool("corral.recovered", true))...)
	}
	return execTrace{span: span, ctx: ctx}
}

// end ends the execution's span with its record as finish wrote it (nil
// when the store refused it to the end), at the run's end.
func (t execTrace) end(fe *corral.Execution, o *corral.Outcome) {
	if t.span == nil {
		return
	}
	if !t.span.IsRecording() {
		t.span.End()
		return
	}
	attrs := []attribute.KeyValue{attribute.String("corral.status", string(o.Status))}
	if o.ErrorType != "" {
		attrs = append(attrs, attribute.String("error.type", string(o.ErrorType)))
	}
	if o.ExitCode != nil {
		attrs = append(attrs, attribute.Int("process.exit.code", *o.ExitCode))
	}
	if o.Signal != "" {
		attrs = append(attrs, attribute.String("corral.signal", o.Signal))
	}
	if o.Containment != "" {
		attrs = append(attrs, attribute.String("corral.containment", string(o.Containment)))
	}
	attrs = append(attrs, attribute.Int("corral.killed", o.Killed), attribute.Int("corral.survivors", o.Survivors))
	if o.Reclaimed > 0 {
		attrs = append(attrs, attribute.Int("corral.reclaimed", o.Reclaimed))
	}
	if o.NumTurns > 0 {
		attrs = append(attrs, attribute.Int("corral.num_turns", o.NumTurns))
	}
	if o.FinalizedBy != "" {
		attrs = append(attrs, attribute.String("corral.finalized_by", o.FinalizedBy))
	}
	attrs = append(attrs, usageAttrs(o.Usage)...)
	if fe != nil {
		attrs = append(attrs, attribute.Int64("corral.duration_ms", fe.DurationMS))
		if fe.CostUSD > 0 {
			attrs = append(attrs, attribute.Float64("corral.cost_usd", fe.CostUSD), attribute.Float64("corral.chain_cost_usd", fe.ChainCostUSD))
		}
		if fe.RetriedBy != "" {
			attrs = append(attrs, attribute.String("corral.retried_by", fe.RetriedBy))
		}
	} else {
		attrs = append(attrs, attribute.Bool("corral.unrecorded", true))
	}
	t.span.SetAttributes(attrs...)
	if o.Status != corral.StatusSucceeded {
		t.span.SetStatus(codes.Error, oneLine(o.Error, 200))
	}
	t.span.End(trace.WithTimestamp(o.Ended))
}

// usageAttrs are the token counts of a headless run's usage, as the
// GenAI conventions name them.
func usageAttrs(raw json.RawMessage) []attribute.KeyValue {
	if len(raw) == 0 {
		return nil
	}
	var u struct {
		In  int64 `json:"input_tokens"`
		Out int64 `json:"output_tokens"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return nil
	}
	return []attribute.KeyValue{attribute.Int64("gen_ai.usage.input_tokens", u.In), attribute.Int64("gen_ai.usage.output_tokens", u.Out)}
}
