package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/redact"
)

// TestEnvCarriesTheSpanContext: TRACEPARENT and TRACESTATE of the span,
// replacing inherited ones; an inherited TRACESTATE the span lacks goes.
func TestEnvCarriesTheSpanContext(t *testing.T) {
	ts, _ := trace.ParseTraceState("vendor=abc")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 15: 2}, SpanID: trace.SpanID{3, 7: 4}, TraceFlags: trace.FlagsSampled, TraceState: ts})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	got := Env(ctx, []string{"A=1", "TRACEPARENT=00-old-old-01", "TRACESTATE=old=1"})
	want := []string{"A=1", "TRACEPARENT=00-01000000000000000000000000000002-0300000000000004-01", "TRACESTATE=vendor=abc"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Env: %v, want %v", got, want)
	}
	plain := trace.NewSpanContext(trace.SpanContextConfig{TraceID: sc.TraceID(), SpanID: sc.SpanID()})
	got = Env(trace.ContextWithSpanContext(context.Background(), plain), []string{"TRACESTATE=old=1"})
	if len(got) != 1 || !strings.HasSuffix(got[0], "-00") {
		t.Errorf("unsampled, no state: %v", got)
	}
	if got := Env(context.Background(), []string{"TRACEPARENT=kept"}); len(got) != 1 || got[0] != "TRACEPARENT=kept" {
		t.Errorf("no span: %v", got)
	}
}

// TestFromEnvReadsAValidTraceparentOnly.
func TestFromEnvReadsAValidTraceparentOnly(t *testing.T) {
	env := map[string]string{"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "TRACESTATE": "a=b"}
	sc := trace.SpanContextFromContext(FromEnv(context.Background(), func(k string) string { return env[k] }))
	if !sc.IsValid() || !sc.IsRemote() || sc.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || sc.TraceState().String() != "a=b" {
		t.Errorf("span context %+v", sc)
	}
	env["TRACEPARENT"] = "00-00000000000000000000000000000000-b7ad6b7169203331-01"
	if sc := trace.SpanContextFromContext(FromEnv(context.Background(), func(k string) string { return env[k] })); sc.IsValid() {
		t.Errorf("an all-zero trace id was taken: %+v", sc)
	}
}

// TestContentOnlyWhenAskedAndRedacted.
func TestContentOnlyWhenAskedAndRedacted(t *testing.T) {
	const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	if s, ok := Content(context.Background(), "x"); ok || s != "" {
		t.Errorf("content without being asked: %q", s)
	}
	ctx := WithContent(context.Background(), redact.New())
	s, ok := Content(ctx, "export GITHUB_TOKEN="+secret+" "+strings.Repeat("y", MaxContent))
	if !ok || strings.Contains(s, secret) || !strings.Contains(s, redact.Mask) || !strings.HasSuffix(s, "…[cut]") || len(s) > MaxContent+16 {
		t.Errorf("content %q…", s[:80])
	}
	if !Recording(CopyContent(context.Background(), ctx)) {
		t.Error("CopyContent lost the setting")
	}
}
