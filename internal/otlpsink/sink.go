// Package otlpsink is a real OTLP receiver for corral's tests and
// benchmarks: the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver), listening on
// loopback for gRPC and HTTP, with a consumer that records every span it
// is handed. What arrives has gone through the Collector's decoding, as it
// would in production; nothing here decodes OTLP by hand.
//
// Only tests and bench/ import it: it links the Collector, which the
// product does not.
package otlpsink

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Sink is a running OTLP receiver.
type Sink struct {
	// HTTP and GRPC are the endpoints, as OTEL_EXPORTER_OTLP_ENDPOINT
	// takes them: http://127.0.0.1:PORT.
	HTTP, GRPC string

	rcv  receiver.Traces
	sink *consumertest.TracesSink
}

// Start starts a receiver on two free loopback ports, stopped when t
// ends.
func Start(t testing.TB) *Sink {
	t.Helper()
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// New starts a receiver; Close stops it.
func New() (*Sink, error) {
	var last error
	for try := 0; try < 5; try++ { // a free port may be taken between the probe and the listen
		s, err := start()
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func start() (*Sink, error) {
	grpcAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	httpAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	g := cfg.Protocols.GRPC.GetOrInsertDefault()
	g.NetAddr.Endpoint = grpcAddr
	cfg.Protocols.GRPC = configoptional.Some(*g)
	h := cfg.Protocols.HTTP.GetOrInsertDefault()
	h.ServerConfig.NetAddr.Endpoint = httpAddr
	cfg.Protocols.HTTP = configoptional.Some(*h)
	s := &Sink{HTTP: "http://" + httpAddr, GRPC: "http://" + grpcAddr, sink: new(consumertest.TracesSink)}
	s.rcv, err = f.CreateTraces(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, s.sink)
	if err != nil {
		return nil, fmt.Errorf("otlpsink: creating the receiver: %w", err)
	}
	if err := s.rcv.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		s.rcv.Shutdown(context.Background())
		return nil, fmt.Errorf("otlpsink: starting the receiver: %w", err)
	}
	return s, nil
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, nil
}

// Close stops the receiver.
func (s *Sink) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.rcv.Shutdown(ctx)
}

// Span is a span as the receiver got it.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Kind                      string
	Start, End                time.Time
	Attrs                     map[string]any
	Status                    string // Unset, Ok or Error
	StatusMessage             string
	Events                    []Event
	Scope                     string
	Resource                  map[string]any
}

// Event is a span event.
type Event struct {
	Name  string
	Attrs map[string]any
}

// Spans returns every span received so far, by start time.
func (s *Sink) Spans() []Span {
	var out []Span
	for _, td := range s.sink.AllTraces() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			res := rs.Resource().Attributes().AsRaw()
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j)
				spans := ss.Spans()
				for k := 0; k < spans.Len(); k++ {
					out = append(out, convert(spans.At(k), ss.Scope().Name(), res))
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

func convert(sp ptrace.Span, scope string, res map[string]any) Span {
	s := Span{
		TraceID:       sp.TraceID().String(),
		SpanID:        sp.SpanID().String(),
		Name:          sp.Name(),
		Kind:          sp.Kind().String(),
		Start:         sp.StartTimestamp().AsTime(),
		End:           sp.EndTimestamp().AsTime(),
		Attrs:         sp.Attributes().AsRaw(),
		Status:        sp.Status().Code().String(),
		StatusMessage: sp.Status().Message(),
		Scope:         scope,
		Resource:      res,
	}
	if !sp.ParentSpanID().IsEmpty() {
		s.ParentID = sp.ParentSpanID().String()
	}
	evs := sp.Events()
	for i := 0; i < evs.Len(); i++ {
		s.Events = append(s.Events, Event{Name: evs.At(i).Name(), Attrs: evs.At(i).Attributes().AsRaw()})
	}
	return s
}

// Wait returns the spans received once done reports true of them, or
// those received when timeout passes (done false).
func (s *Sink) Wait(timeout time.Duration, done func([]Span) bool) ([]Span, bool) {
	end := time.Now().Add(timeout)
	for {
		spans := s.Spans()
		if done(spans) {
			return spans, true
		}
		if time.Now().After(end) {
			return spans, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Reset forgets the spans received so far.
func (s *Sink) Reset() { s.sink.Reset() }

// BuildExporter builds corral's companion exporter, corral-otlp, into dir
// and returns its path.
func BuildExporter(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "corral-otlp")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/corralrun/corral/cmd/corral-otlp").CombinedOutput(); err != nil {
		t.Fatalf("building corral-otlp: %v\n%s", err, out)
	}
	return bin
}

// Tree indexes spans by id, for assertions on parentage.
type Tree map[string]Span

// NewTree indexes spans.
func NewTree(spans []Span) Tree {
	t := Tree{}
	for _, s := range spans {
		t[s.SpanID] = s
	}
	return t
}

// Named returns the spans of that name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Children returns the spans whose parent is id.
func Children(spans []Span, id string) []Span {
	var out []Span
	for _, s := range spans {
		if s.ParentID == id {
			out = append(out, s)
		}
	}
	return out
}
