package tracing

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C specification's examples (https://www.w3.org/TR/trace-context/)
// and the cases of its test suite.
const (
	w3cTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	w3cParent = "00f067aa0ba902b7"
	w3cState  = "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
)

// TestTraceparentReadsTheW3CExamples: each valid traceparent gives its
// ids and the flags corral keeps (sampled, random), as a remote parent
// with its tracestate; a tracestate that does not parse is dropped
// without losing the traceparent.
func TestTraceparentReadsTheW3CExamples(t *testing.T) {
	for _, c := range []struct {
		name, tp, ts string
		flags        trace.TraceFlags
		state        string
	}{
		{name: "sampled", tp: "00-" + w3cTrace + "-" + w3cParent + "-01", ts: w3cState, flags: trace.FlagsSampled, state: w3cState},
		{name: "not sampled", tp: "00-" + w3cTrace + "-" + w3cParent + "-00", flags: 0},
		{name: "sampled and random", tp: "00-" + w3cTrace + "-" + w3cParent + "-03", flags: trace.FlagsSampled | trace.FlagsRandom},
		{name: "bad tracestate dropped", tp: "00-" + w3cTrace + "-" + w3cParent + "-01", ts: "not a list", flags: trace.FlagsSampled},
		{name: "a later version, four fields", tp: "01-" + w3cTrace + "-" + w3cParent + "-01", flags: trace.FlagsSampled},
		{name: "a later version, a fifth field", tp: "cc-" + w3cTrace + "-" + w3cParent + "-01-what-the-future-will-be-like", flags: trace.FlagsSampled},
		{name: "a later version, flags it defines masked", tp: "fe-" + w3cTrace + "-" + w3cParent + "-09", flags: trace.FlagsSampled},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := trace.SpanContextFromContext(FromHeader(context.Background(), c.tp, c.ts))
			if !sc.IsValid() || !sc.IsRemote() || sc.TraceID().String() != w3cTrace || sc.SpanID().String() != w3cParent {
				t.Fatalf("span context %v from %q", sc, c.tp)
			}
			if sc.TraceFlags() != c.flags || sc.TraceState().String() != c.state {
				t.Errorf("flags %v state %q, want %v %q", sc.TraceFlags(), sc.TraceState().String(), c.flags, c.state)
			}
		})
	}
}

// invalidTraceparents are the traceparents a W3C parser refuses, the
// first one the value that makes each so.
var invalidTraceparents = []string{
	"",
	"00",
	"ff-" + w3cTrace + "-" + w3cParent + "-01",                                 // version ff
	"00-00000000000000000000000000000000-" + w3cParent + "-01",                 // all-zero trace id
	"00-" + w3cTrace + "-0000000000000000-01",                                  // all-zero parent id
	"00-4BF92F3577B34DA6A3CE929D0E0E4736-" + w3cParent + "-01",                 // uppercase
	"00-" + w3cTrace + "-00F067AA0BA902B7-01",                                  // uppercase
	"0A-" + w3cTrace + "-" + w3cParent + "-01",                                 // uppercase version
	"00-" + w3cTrace + "-" + w3cParent + "-0A",                                 // uppercase flags
	"00-4bf92f3577b34da6a3ce929d0e0e473-" + w3cParent + "-01",                  // trace id short
	"00-4bf92f3577b34da6a3ce929d0e0e47366-" + w3cParent + "-01",                // trace id long
	"00-" + w3cTrace + "-00f067aa0ba902b-01",                                   // parent id short
	"00-" + w3cTrace + "-00f067aa0ba902b77-01",                                 // parent id long
	"00-4bf92f3577b34da6a3ce929d0e0e473g-" + w3cParent + "-01",                 // not hex
	"00-" + w3cTrace + "-" + w3cParent + "-0g",                                 // flags not hex
	"00-" + w3cTrace + "-" + w3cParent + "-1",                                  // flags short
	"00-" + w3cTrace + "-" + w3cParent + "-010",                                // flags long
	"0-" + w3cTrace + "-" + w3cParent + "-01",                                  // version short
	"000-" + w3cTrace + "-" + w3cParent + "-01",                                // version long
	"00_" + w3cTrace + "_" + w3cParent + "_01",                                 // not dashes
	" 00-" + w3cTrace + "-" + w3cParent + "-01",                                // leading space
	"00-" + w3cTrace + "-" + w3cParent + "-01-what-the-future-will-be-like",    // version 00 has four fields
	"00-" + w3cTrace + "-" + w3cParent + "-01-",                                // version 00 has four fields
	"00-" + w3cTrace + "-" + w3cParent + "-05",                                 // version 00, a reserved flag
	"cc-" + w3cTrace + "-" + w3cParent + "-01.what-the-future-will-be-like",    // a fifth field not after a dash
	"cc-" + w3cTrace + "-" + w3cParent + "-0",                                  // a later version, too short
	"cc-" + w3cTrace + "-" + w3cParent + "-01" + "x" + "-what-the-future-will", // flags then no dash
}

// TestTraceparentRefusesWhatTheW3CRefuses: each invalid traceparent
// leaves the context as it was.
func TestTraceparentRefusesWhatTheW3CRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tp := range invalidTraceparents {
		if got := FromHeader(ctx, tp, w3cState); got != ctx {
			t.Errorf("%q taken: %v", tp, trace.SpanContextFromContext(got))
		}
	}
}

// TestTraceparentReadsAsOpenTelemetrysPropagator: on every case above the
// parser agrees with OpenTelemetry's own, which it replaces, but for a
// version-00 traceparent ending in a dash: the specification says version
// 00 is exactly 55 characters, and the propagator takes it.
func TestTraceparentReadsAsOpenTelemetrysPropagator(t *testing.T) {
	cases := append([]string{
		"00-" + w3cTrace + "-" + w3cParent + "-01",
		"00-" + w3cTrace + "-" + w3cParent + "-00",
		"00-" + w3cTrace + "-" + w3cParent + "-03",
		"01-" + w3cTrace + "-" + w3cParent + "-01",
		"cc-" + w3cTrace + "-" + w3cParent + "-01-what-the-future-will-be-like",
		"fe-" + w3cTrace + "-" + w3cParent + "-09",
	}, invalidTraceparents...)
	for _, tp := range cases {
		if tp == "00-"+w3cTrace+"-"+w3cParent+"-01-" {
			continue
		}
		ours := trace.SpanContextFromContext(FromHeader(context.Background(), tp, w3cState))
		theirs := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
			propagation.MapCarrier{"traceparent": tp, "tracestate": w3cState}))
		if !ours.Equal(theirs) {
			t.Errorf("%q: ours %v, OpenTelemetry's %v", tp, ours, theirs)
		}
	}
}

// TestTraceparentRoundTrips: what Traceparent writes reads back the same,
// keeping the sampled flag alone.
func TestTraceparentRoundTrips(t *testing.T) {
	for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled, trace.FlagsSampled | trace.FlagsRandom} {
		sc := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{0xab, 15: 0xcd}, SpanID: trace.SpanID{0x01, 7: 0xef}, TraceFlags: flags, Remote: true,
		})
		tp := Traceparent(sc)
		back := trace.SpanContextFromContext(FromHeader(context.Background(), tp, ""))
		want := sc.WithTraceFlags(flags & trace.FlagsSampled)
		if !back.Equal(want) {
			t.Errorf("flags %v: %q read back as %v, want %v", flags, tp, back, want)
		}
	}
	if got := Traceparent(trace.SpanContext{}); got != "00-00000000000000000000000000000000-0000000000000000-00" {
		t.Errorf("the zero span context: %q", got)
	}
}
