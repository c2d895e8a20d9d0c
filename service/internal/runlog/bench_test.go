package runlog

import (
	"bytes"
	"path/filepath"
	"testing"
)

func BenchmarkWrite1KLine(b *testing.B) {
	w, _ := Create(filepath.Join(b.TempDir(), "x.log"), "x", NewHub(), 1<<40)
	line := bytes.Repeat([]byte("x"), 1000)
	b.SetBytes(1000)
	for b.Loop() {
		w.Write("stdout", line)
	}
	w.Close()
}
