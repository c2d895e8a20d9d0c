package telemetry

import (
	"reflect"
	"runtime"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/corralrun/corral/internal/telemetry/wire"
)

// attrsCap is the room a span starts with for its attributes: corral's
// spans have up to about twenty, so they are set without growing the
// slice.
const attrsCap = 24

// span is a sampled span being recorded.
type span struct {
	embedded.Span
	t      *tracer
	sc     trace.SpanContext
	parent trace.SpanContext
	kind   trace.SpanKind
	start  time.Time

	mu    sync.Mutex
	w     wire.Span // what is recorded: name, attributes, events, links, status
	ended bool
}

func newSpan(t *tracer, name string, sc, parent trace.SpanContext, cfg *trace.SpanConfig) *span {
	s := &span{t: t, sc: sc, parent: parent, kind: cfg.SpanKind(), start: cfg.Timestamp()}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	s.w.Name = name
	s.w.Attrs = make([]attribute.KeyValue, 0, attrsCap)
	s.SetAttributes(cfg.Attributes()...)
	for _, l := range cfg.Links() {
		s.AddLink(l)
	}
	return s
}

func (s *span) SpanContext() trace.SpanContext { return s.sc }

func (s *span) IsRecording() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.ended
}

func (s *span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.w.Name = name
	}
}

// SetAttributes sets attributes; a key set again keeps its place and
// takes the new value, as in the SDK. (A span holds a few dozen at most:
// a linear search for the key beats a map's allocation.)
func (s *span) SetAttributes(kvs ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
next:
	for _, kv := range kvs {
		if !kv.Valid() {
			continue
		}
		for i := range s.w.Attrs {
			if s.w.Attrs[i].Key == kv.Key {
				s.w.Attrs[i] = kv
				continue next
			}
		}
		if len(s.w.Attrs) >= maxAttrs {
			s.w.DroppedAttrs++
			continue
		}
		s.w.Attrs = append(s.w.Attrs, kv)
	}
}

func (s *span) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	s.addEvent(name, cfg.Timestamp(), cfg.Attributes())
}

func (s *span) addEvent(name string, at time.Time, attrs []attribute.KeyValue) {
	if at.IsZero() {
		at = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if len(s.w.Events) >= maxEvents {
		s.w.DroppedEvents++
		return
	}
	s.w.Events = append(s.w.Events, wire.Event{Name: name, Time: at.UnixNano(), Attrs: attrs})
}

// RecordError adds an exception event, as the SDK does; it does not set
// the status.
func (s *span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	cfg := trace.NewEventConfig(opts...)
	attrs := append([]attribute.KeyValue{
		attribute.String("exception.type", typeName(err)),
		attribute.String("exception.message", err.Error()),
	}, cfg.Attributes()...)
	if cfg.StackTrace() {
		buf := make([]byte, 4<<10)
		attrs = append(attrs, attribute.String("exception.stacktrace", string(buf[:runtime.Stack(buf, false)])))
	}
	s.addEvent("exception", cfg.Timestamp(), attrs)
}

func typeName(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

func (s *span) AddLink(l trace.Link) {
	if !l.SpanContext.IsValid() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if len(s.w.Links) >= maxLinks {
		s.w.DroppedLinks++
		return
	}
	sc := l.SpanContext
	s.w.Links = append(s.w.Links, wire.Link{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Flags: sc.TraceFlags(),
		TraceState: sc.TraceState().String(), Remote: sc.IsRemote(), Attrs: l.Attributes})
}

// SetStatus sets the status; a status only moves up, Unset < Error < Ok,
// and only an error keeps its description, as in the SDK.
func (s *span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || code < s.w.Status {
		return
	}
	s.w.Status, s.w.Message = code, ""
	if code == codes.Error {
		s.w.Message = description
	}
}

func (s *span) TracerProvider() trace.TracerProvider { return s.t.p }

// End ends the span and hands it to the exporter; a second End does
// nothing.
func (s *span) End(opts ...trace.SpanEndOption) {
	cfg := trace.NewSpanEndConfig(opts...)
	end := cfg.Timestamp()
	if end.IsZero() {
		end = time.Now()
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	w := &s.w
	w.TraceID, w.SpanID, w.Flags = s.sc.TraceID(), s.sc.SpanID(), s.sc.TraceFlags()
	w.TraceState = s.sc.TraceState().String()
	if s.parent.IsValid() {
		w.Parent, w.ParentRemote = s.parent.SpanID(), s.parent.IsRemote()
	}
	w.Kind, w.Start, w.End = s.kind, s.start.UnixNano(), end.UnixNano()
	w.Scope, w.ScopeVersion = s.t.scope.name, s.t.scope.version
	frame := wire.AppendSpan(make([]byte, 0, 512), w)
	s.mu.Unlock()
	s.t.p.exp.send(frame)
}

// unsampled is a span the sampler left out: it carries its context (so
// the processes under it still get TRACEPARENT, with the sampled flag
// clear) and records nothing.
type unsampled struct {
	embedded.Span
	sc trace.SpanContext
	p  *Provider
}

func (s unsampled) SpanContext() trace.SpanContext          { return s.sc }
func (s unsampled) IsRecording() bool                       { return false }
func (s unsampled) SetName(string)                          {}
func (s unsampled) SetAttributes(...attribute.KeyValue)     {}
func (s unsampled) AddEvent(string, ...trace.EventOption)   {}
func (s unsampled) AddLink(trace.Link)                      {}
func (s unsampled) RecordError(error, ...trace.EventOption) {}
func (s unsampled) SetStatus(codes.Code, string)            {}
func (s unsampled) End(...trace.SpanEndOption)              {}
func (s unsampled) TracerProvider() trace.TracerProvider    { return s.p }
