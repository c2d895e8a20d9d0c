package corral

import (
	"fmt"
	"strings"
)

// Output is what was kept of one output stream: its first bytes and its last
// bytes, within a byte cap, and how much the stream carried in all. Head and
// Tail never overlap; when nothing was dropped, Tail continues Head exactly.
type Output struct {
	// Head is the start of the stream.
	Head []byte
	// Tail is the end of the stream, after Head.
	Tail []byte
	// Bytes is how many bytes the stream carried, kept or not.
	Bytes int64
	// Truncated reports that bytes between Head and Tail were dropped.
	Truncated bool
	// SpillPath, when not empty, names a file holding the whole stream.
	SpillPath string
}

// Dropped returns how many bytes were dropped between Head and Tail.
func (o Output) Dropped() int64 {
	return o.Bytes - int64(len(o.Head)) - int64(len(o.Tail))
}

// Text returns Head and Tail joined. When bytes were dropped, a marker line
// between them says how many, and where the full stream is if it was spilled.
func (o Output) Text() string {
	if !o.Truncated {
		return string(o.Head) + string(o.Tail)
	}
	var b strings.Builder
	b.Grow(len(o.Head) + len(o.Tail) + 80)
	b.Write(o.Head)
	if len(o.Head) > 0 && o.Head[len(o.Head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d bytes dropped", o.Dropped())
	if o.SpillPath != "" {
		fmt.Fprintf(&b, "; full output in %s", o.SpillPath)
	}
	b.WriteString(" ...]\n")
	b.Write(o.Tail)
	return b.String()
}
