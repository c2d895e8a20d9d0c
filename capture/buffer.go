package capture

import (
	"sync"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
)

// Buffer is an io.Writer that keeps the first and the last bytes written to
// it within Max bytes in all, and counts every byte. Half the cap goes to the
// head, half to the tail. Memory grows with the bytes written up to the cap,
// never beyond.
//
// A Buffer is safe for one writer and any number of concurrent readers.
// Write never fails and never blocks on anything but the Buffer's lock.
type Buffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // ring once full: tail[start:] then tail[:start] is the order
	start   int
	n       int64
}

// NewBuffer returns a Buffer keeping at most max bytes. A max of zero or less
// keeps nothing but the count.
func NewBuffer(max int) *Buffer {
	if max < 0 {
		max = 0
	}
	h := max / 2
	if mutant.CapIgnored {
		h = 1 << 40
	}
	return &Buffer{headCap: h, tailCap: max - h}
}

// Write records p. It always returns len(p), nil.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.n += int64(n)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		// p alone fills the tail: keep its last tailCap bytes, reset the ring.
		if cap(b.tail) < b.tailCap {
			b.tail = make([]byte, b.tailCap)
		}
		b.tail = b.tail[:b.tailCap]
		copy(b.tail, p[len(p)-b.tailCap:])
		b.start = 0
		return n, nil
	}
	if len(b.tail) < b.tailCap {
		// Still growing: append what fits, then fall through to the ring.
		k := min(b.tailCap-len(b.tail), len(p))
		b.tail = append(b.tail, p[:k]...)
		p = p[k:]
		if len(p) == 0 {
			return n, nil
		}
	}
	// Ring: overwrite the oldest bytes, starting at start.
	for len(p) > 0 {
		k := copy(b.tail[b.start:], p)
		p = p[k:]
		b.start = (b.start + k) % b.tailCap
	}
	return n, nil
}

// Len returns how many bytes have been written in all.
func (b *Buffer) Len() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// Output returns a copy of what is kept. SpillPath is left empty.
func (b *Buffer) Output() corral.Output {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := corral.Output{
		Head:  append([]byte(nil), b.head...),
		Tail:  b.linearTail(),
		Bytes: b.n,
	}
	o.Truncated = o.Dropped() > 0
	return o
}

// linearTail returns the tail in stream order, as a new slice.
func (b *Buffer) linearTail() []byte {
	if len(b.tail) == 0 {
		return nil
	}
	t := make([]byte, 0, len(b.tail))
	t = append(t, b.tail[b.start:]...)
	return append(t, b.tail[:b.start]...)
}

// ReadFrom returns the kept bytes at stream offsets at or after off, the
// offset just past them (the stream length), and how many bytes between off
// and next were dropped (they lay between the head and the tail). It lets a
// reader follow a stream incrementally: call again with the returned next.
func (b *Buffer) ReadFrom(off int64) (data []byte, next int64, dropped int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if off < 0 {
		off = 0
	}
	next = b.n
	if off >= b.n {
		return nil, next, 0
	}
	headEnd := int64(len(b.head))
	tailStart := b.n - int64(len(b.tail))
	if off < headEnd {
		data = append(data, b.head[off:]...)
		off = headEnd
	}
	if off < tailStart {
		if tailStart > headEnd {
			dropped = tailStart - off
		}
		off = tailStart
	}
	t := b.linearTail()
	data = append(data, t[off-tailStart:]...)
	return data, next, dropped
}
