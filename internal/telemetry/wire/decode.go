package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// MaxFrame bounds a frame a Reader accepts.
const MaxFrame = 64 << 20

// ErrCorrupt means a frame does not hold a span.
var ErrCorrupt = errors.New("wire: corrupt span frame")

// Reader reads span frames.
type Reader struct {
	r   *bufio.Reader
	buf []byte
}

// NewReader reads frames from r.
func NewReader(r *bufio.Reader) *Reader { return &Reader{r: r} }

// Next reads the next span. It returns io.EOF at the end of the input, and
// an error wrapping ErrCorrupt for a frame it cannot read (the frame is
// skipped: the next call reads the one after).
func (r *Reader) Next(s *Span) error {
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return err
	}
	if n > MaxFrame {
		return fmt.Errorf("%w: a frame of %d bytes", ErrCorrupt, n)
	}
	if cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return fmt.Errorf("reading a frame: %w", err)
	}
	d := decoder{b: b}
	*s = Span{}
	d.span(s)
	if d.err != nil || len(d.b) != 0 {
		return fmt.Errorf("%w (%v)", ErrCorrupt, d.err)
	}
	return nil
}

// decoder reads a frame's fields in order; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.fail("short frame")
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[k:]
	return v
}

// count reads a count of items of at least min bytes each.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/max(min, 1)) {
		d.fail("count beyond the frame")
		return 0
	}
	return int(n)
}

func (d *decoder) string() string { return string(d.bytes(d.count(1))) }

func (d *decoder) bool() bool { return d.bytes(1)[0] != 0 }

func (d *decoder) float() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(d.bytes(8)))
}

func (d *decoder) span(s *Span) {
	copy(s.TraceID[:], d.bytes(16))
	copy(s.SpanID[:], d.bytes(8))
	copy(s.Parent[:], d.bytes(8))
	flags := d.uvarint()
	s.Flags, s.ParentRemote = trace.TraceFlags(flags&0xff), flags&0x100 != 0
	s.TraceState = d.string()
	s.Name = d.string()
	s.Kind = trace.SpanKind(d.uvarint())
	s.Start, s.End = d.varint(), d.varint()
	s.Status = codes.Code(d.uvarint())
	s.Message = d.string()
	s.Scope, s.ScopeVersion = d.string(), d.string()
	s.DroppedAttrs, s.DroppedEvents, s.DroppedLinks = int(d.uvarint()), int(d.uvarint()), int(d.uvarint())
	s.Attrs = d.attrs()
	if n := d.count(3); n > 0 {
		s.Events = make([]Event, n)
		for i := range s.Events {
			s.Events[i] = Event{Name: d.string(), Time: d.varint(), Attrs: d.attrs()}
		}
	}
	if n := d.count(27); n > 0 {
		s.Links = make([]Link, n)
		for i := range s.Links {
			l := &s.Links[i]
			copy(l.TraceID[:], d.bytes(16))
			copy(l.SpanID[:], d.bytes(8))
			l.Flags = trace.TraceFlags(d.bytes(1)[0])
			l.TraceState = d.string()
			l.Remote = d.bool()
			l.Attrs = d.attrs()
		}
	}
}

func (d *decoder) attrs() []attribute.KeyValue {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	out := make([]attribute.KeyValue, 0, n)
	for range n {
		k := attribute.Key(d.string())
		switch tag := d.bytes(1)[0]; tag {
		case tagBool:
			out = append(out, k.Bool(d.bool()))
		case tagInt:
			out = append(out, k.Int64(d.varint()))
		case tagFloat:
			out = append(out, k.Float64(d.float()))
		case tagString:
			out = append(out, k.String(d.string()))
		case tagBools:
			l := make([]bool, d.count(1))
			for i := range l {
				l[i] = d.bool()
			}
			out = append(out, k.BoolSlice(l))
		case tagInts:
			l := make([]int64, d.count(1))
			for i := range l {
				l[i] = d.varint()
			}
			out = append(out, k.Int64Slice(l))
		case tagFloats:
			l := make([]float64, d.count(8))
			for i := range l {
				l[i] = d.float()
			}
			out = append(out, k.Float64Slice(l))
		case tagStrings:
			l := make([]string, d.count(1))
			for i := range l {
				l[i] = d.string()
			}
			out = append(out, k.StringSlice(l))
		default:
			d.fail(fmt.Sprintf("unknown attribute tag %d", tag))
			return out
		}
	}
	return out
}
