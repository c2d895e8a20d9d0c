//go:build !mutation_noreap

package statedir

import (
	"os"
	"path/filepath"
	"strings"
)

// Reap removes the directories in base whose names start with prefix and
// whose owner is gone, and returns how many it removed. It never removes
// one whose owner is alive, is in another pid namespace, or cannot be
// told; nor one that belongs to another user.
func Reap(base, prefix string) int {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		o, ok := parse(rest)
		if !ok || o.ns != self().ns || o == self() || !gone(o) {
			continue
		}
		path := filepath.Join(base, e.Name())
		if fi, err := os.Lstat(path); err != nil || !ownedByUs(fi) {
			continue
		}
		if os.RemoveAll(path) == nil {
			n++
		}
	}
	return n
}
