package capture

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

func TestBufferKeepsEverythingUnderTheCap(t *testing.T) {
	b := NewBuffer(100)
	for i := 0; i < 10; i++ {
		fmt.Fprintf(b, "line %d\n", i)
	}
	o := b.Output()
	want := ""
	for i := 0; i < 10; i++ {
		want += fmt.Sprintf("line %d\n", i)
	}
	if o.Truncated || o.Text() != want || o.Bytes != int64(len(want)) {
		t.Fatalf("got %+v, text %q", o, o.Text())
	}
}

func TestBufferKeepsHeadAndTailOfAFlood(t *testing.T) {
	b := NewBuffer(64)
	var all bytes.Buffer
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		p := make([]byte, r.Intn(50))
		for j := range p {
			p[j] = byte('a' + r.Intn(26))
		}
		all.Write(p)
		b.Write(p)
	}
	o := b.Output()
	a := all.Bytes()
	if !bytes.Equal(o.Head, a[:32]) {
		t.Errorf("head %q, want %q", o.Head, a[:32])
	}
	if !bytes.Equal(o.Tail, a[len(a)-32:]) {
		t.Errorf("tail %q, want %q", o.Tail, a[len(a)-32:])
	}
	if !o.Truncated || o.Bytes != int64(len(a)) || o.Dropped() != int64(len(a)-64) {
		t.Errorf("got bytes %d dropped %d truncated %v", o.Bytes, o.Dropped(), o.Truncated)
	}
}

func TestBufferMemoryStaysAtTheCap(t *testing.T) {
	b := NewBuffer(1 << 10)
	chunk := bytes.Repeat([]byte("x"), 4096)
	for i := 0; i < 10000; i++ {
		b.Write(chunk)
	}
	if cap(b.head) > 1<<9 || cap(b.tail) > 1<<9 {
		t.Fatalf("buffer grew past the cap: head %d tail %d", cap(b.head), cap(b.tail))
	}
}

func TestBufferZeroCapCountsOnly(t *testing.T) {
	b := NewBuffer(0)
	b.Write([]byte("hello"))
	o := b.Output()
	if o.Bytes != 5 || len(o.Head)+len(o.Tail) != 0 || !o.Truncated {
		t.Fatalf("got %+v", o)
	}
}

func TestBufferReadFromFollowsTheStream(t *testing.T) {
	b := NewBuffer(20)
	b.Write([]byte("0123456789"))
	data, next, dropped := b.ReadFrom(0)
	if string(data) != "0123456789" || next != 10 || dropped != 0 {
		t.Fatalf("first read: %q %d %d", data, next, dropped)
	}
	b.Write([]byte("abcdefghijklmnopqrstuvwxyz")) // 36 bytes in all
	data, next, dropped = b.ReadFrom(next)
	// Head holds 0..9; tail holds the last 10 bytes (q..z); 10..25 dropped.
	if string(data) != "qrstuvwxyz" || next != 36 || dropped != 16 {
		t.Fatalf("second read: %q %d %d", data, next, dropped)
	}
	data, next, dropped = b.ReadFrom(next)
	if len(data) != 0 || next != 36 || dropped != 0 {
		t.Fatalf("third read: %q %d %d", data, next, dropped)
	}
}

func TestBufferMarksTheGapInText(t *testing.T) {
	b := NewBuffer(8)
	b.Write([]byte("aaaa-middle-bbbb"))
	if got, want := b.Output().Text(), "aaaa\n[... 8 bytes dropped ...]\nbbbb"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

func FuzzBufferMatchesNaiveHeadTail(f *testing.F) {
	f.Add([]byte("hello world"), 4, 3)
	f.Fuzz(func(t *testing.T, data []byte, max int, chunk int) {
		if max < 0 || max > 1<<12 || chunk <= 0 || chunk > 1<<12 {
			return
		}
		b := NewBuffer(max)
		for p := data; len(p) > 0; {
			k := min(chunk, len(p))
			b.Write(p[:k])
			p = p[k:]
		}
		o := b.Output()
		h := max / 2
		if len(data) <= max {
			if got := append(append([]byte{}, o.Head...), o.Tail...); !bytes.Equal(got, data) {
				t.Fatalf("under cap: %q, want %q", got, data)
			}
			return
		}
		if !bytes.Equal(o.Head, data[:h]) || !bytes.Equal(o.Tail, data[len(data)-(max-h):]) {
			t.Fatalf("head/tail mismatch")
		}
	})
}
