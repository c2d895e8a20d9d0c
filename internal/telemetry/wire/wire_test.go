package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

func sample() Span {
	return Span{
		TraceID: trace.TraceID{1, 2, 3, 15: 9}, SpanID: trace.SpanID{4, 7: 5}, Parent: trace.SpanID{6, 7: 7}, ParentRemote: true,
		Flags: trace.FlagsSampled, TraceState: "vendor=x", Name: "proc.run", Kind: trace.SpanKindServer, Start: 1700000000000000001, End: 1700000000500000002,
		Attrs: []attribute.KeyValue{
			attribute.Bool("b", true), attribute.Int64("i", -42), attribute.Float64("f", 1.25), attribute.String("s", "héllo\n"),
			attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, -2}), attribute.Float64Slice("fs", []float64{0.5}),
			attribute.StringSlice("ss", []string{"a", ""}),
		},
		Events: []Event{{Name: "exception", Time: 1700000000200000000, Attrs: []attribute.KeyValue{attribute.String("exception.message", "boom")}}},
		Links:  []Link{{TraceID: trace.TraceID{8}, SpanID: trace.SpanID{9}, Flags: trace.FlagsSampled, TraceState: "a=b", Remote: true, Attrs: []attribute.KeyValue{attribute.Int("n", 1)}}},
		Status: codes.Error, Message: "exit 3",
		DroppedAttrs: 1, DroppedEvents: 2, DroppedLinks: 3, Scope: "github.com/corralrun/corral/proc", ScopeVersion: "v1",
	}
}

// TestSpansRoundTrip: what AppendSpan writes, Next reads back the same,
// frame after frame, a frame over 2 MiB included.
func TestSpansRoundTrip(t *testing.T) {
	a, b := sample(), Span{Name: "root", Scope: "x"}
	big := sample()
	big.Attrs = append(big.Attrs, attribute.String("big", strings.Repeat("x", 3<<20)))
	var buf []byte
	for _, s := range []*Span{&a, &b, &big} {
		buf = AppendSpan(buf, s)
	}
	r := NewReader(bufio.NewReader(bytes.NewReader(buf)))
	for i, want := range []Span{a, b, big} {
		var got Span
		if err := r.Next(&got); err != nil {
			t.Fatalf("span %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("span %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	var s Span
	if err := r.Next(&s); err != io.EOF {
		t.Errorf("after the last frame: %v, want EOF", err)
	}
}

// TestCorruptFrameIsSkipped: a frame that does not parse is reported and
// the next one is read.
func TestCorruptFrameIsSkipped(t *testing.T) {
	a := sample()
	good := AppendSpan(nil, &a)
	bad := []byte{5, 1, 2, 3, 4, 5}
	r := NewReader(bufio.NewReader(bytes.NewReader(append(bad, good...))))
	var s Span
	if err := r.Next(&s); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt frame: %v", err)
	}
	if err := r.Next(&s); err != nil || s.Name != "proc.run" {
		t.Errorf("the frame after: %v %q", err, s.Name)
	}
}

// BenchmarkAppendSpan and BenchmarkReadSpan: a span like proc.run's, on
// each side.
func BenchmarkAppendSpan(b *testing.B) {
	s := sample()
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendSpan(buf[:0], &s)
	}
}

func BenchmarkReadSpan(b *testing.B) {
	s := sample()
	frame := AppendSpan(nil, &s)
	all := bytes.Repeat(frame, 1000)
	b.ReportAllocs()
	var r *Reader
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			r = NewReader(bufio.NewReader(bytes.NewReader(all)))
		}
		if err := r.Next(&s); err != nil {
			b.Fatal(err)
		}
	}
}
