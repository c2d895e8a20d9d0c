package wire

import (
	"encoding/binary"
	"math"

	"go.opentelemetry.io/otel/attribute"
)

// Attribute value tags in a frame.
const (
	tagBool byte = iota + 1
	tagInt
	tagFloat
	tagString
	tagBools
	tagInts
	tagFloats
	tagStrings
)

// AppendSpan appends s as a frame: its length as a uvarint, then the
// trace id (16 bytes), span id and parent id (8 bytes each, the parent
// zero for a root), flags (the trace flags, and 0x100 for a remote
// parent), trace state, name, kind, start and end, status and message,
// scope and its version, the dropped counts, the attributes, events and
// links. Integers are varints, strings and lists are counted.
func AppendSpan(b []byte, s *Span) []byte {
	start := len(b)
	b = append(b, 0, 0, 0) // room for the length, moved if it needs more
	body := len(b)
	b = append(b, s.TraceID[:]...)
	b = append(b, s.SpanID[:]...)
	b = append(b, s.Parent[:]...)
	flags := uint64(s.Flags)
	if s.ParentRemote {
		flags |= 0x100
	}
	b = binary.AppendUvarint(b, flags)
	b = appendString(b, s.TraceState)
	b = appendString(b, s.Name)
	b = binary.AppendUvarint(b, uint64(s.Kind))
	b = binary.AppendVarint(b, s.Start)
	b = binary.AppendVarint(b, s.End)
	b = binary.AppendUvarint(b, uint64(s.Status))
	b = appendString(b, s.Message)
	b = appendString(b, s.Scope)
	b = appendString(b, s.ScopeVersion)
	b = binary.AppendUvarint(b, uint64(s.DroppedAttrs))
	b = binary.AppendUvarint(b, uint64(s.DroppedEvents))
	b = binary.AppendUvarint(b, uint64(s.DroppedLinks))
	b = appendAttrs(b, s.Attrs)
	b = binary.AppendUvarint(b, uint64(len(s.Events)))
	for _, e := range s.Events {
		b = appendString(b, e.Name)
		b = binary.AppendVarint(b, e.Time)
		b = appendAttrs(b, e.Attrs)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Links)))
	for _, l := range s.Links {
		b = append(b, l.TraceID[:]...)
		b = append(b, l.SpanID[:]...)
		b = append(b, byte(l.Flags))
		b = appendString(b, l.TraceState)
		b = appendBool(b, l.Remote)
		b = appendAttrs(b, l.Attrs)
	}
	return putLength(b, start, body)
}

// putLength writes the body's length in the three bytes reserved before
// it (a uvarint padded to three bytes, which readers take as any other),
// or, for a body of 2 MiB or more, moves the body to make room.
func putLength(b []byte, start, body int) []byte {
	n := uint64(len(b) - body)
	if n < 1<<21 {
		b[start] = byte(n) | 0x80
		b[start+1] = byte(n>>7) | 0x80
		b[start+2] = byte(n >> 14)
		return b
	}
	out := binary.AppendUvarint(make([]byte, 0, len(b)+binary.MaxVarintLen64), n)
	return append(append(b[:start:start], out...), b[body:]...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendAttrs(b []byte, kvs []attribute.KeyValue) []byte {
	b = binary.AppendUvarint(b, uint64(len(kvs)))
	for _, kv := range kvs {
		b = appendString(b, string(kv.Key))
		v := kv.Value
		switch v.Type() {
		case attribute.BOOL:
			b = appendBool(append(b, tagBool), v.AsBool())
		case attribute.INT64:
			b = binary.AppendVarint(append(b, tagInt), v.AsInt64())
		case attribute.FLOAT64:
			b = appendFloat(append(b, tagFloat), v.AsFloat64())
		case attribute.BOOLSLICE:
			l := v.AsBoolSlice()
			b = binary.AppendUvarint(append(b, tagBools), uint64(len(l)))
			for _, x := range l {
				b = appendBool(b, x)
			}
		case attribute.INT64SLICE:
			l := v.AsInt64Slice()
			b = binary.AppendUvarint(append(b, tagInts), uint64(len(l)))
			for _, x := range l {
				b = binary.AppendVarint(b, x)
			}
		case attribute.FLOAT64SLICE:
			l := v.AsFloat64Slice()
			b = binary.AppendUvarint(append(b, tagFloats), uint64(len(l)))
			for _, x := range l {
				b = appendFloat(b, x)
			}
		case attribute.STRINGSLICE:
			l := v.AsStringSlice()
			b = binary.AppendUvarint(append(b, tagStrings), uint64(len(l)))
			for _, x := range l {
				b = appendString(b, x)
			}
		case attribute.STRING:
			b = appendString(append(b, tagString), v.AsString())
		default: // the kinds corral does not make travel as their text
			b = appendString(append(b, tagString), v.Emit())
		}
	}
	return b
}
