package shell

import (
	"github.com/corralrun/corral"
	"github.com/corralrun/corral/shell/internal/clip"
)

// The rules by which this package shows output to a model, for the other
// front ends that show a model what a run printed (the task service's MCP
// tools), so that every text a model reads from corral is cleaned and cut
// the same way.

// CleanForModel removes terminal escape sequences and control characters
// other than newline and tab from s, and resolves carriage-return
// overwrites (progress bars) to the last text of each line, as
// run_command's stdout and stderr are.
func CleanForModel(s string) string { return cleanText(s) }

// ClipForModel cuts s to at most budget characters (runes) as a result is
// cut: it keeps the head and the tail, at line ends when one is near,
// with a marker line between them saying how many characters were left
// out. It reports whether it cut. A negative budget counts as zero.
func ClipForModel(s string, budget int) (string, bool) {
	t := clip.Output(corral.Output{Head: []byte(s), Bytes: int64(len(s))}, max(budget, 0), "")
	return t.S, t.Truncated
}

// SplitBudget splits budget characters between two texts of a and b
// characters as a result splits stdout and stderr: a text that fits in
// half keeps all it needs, the other gets the rest.
func SplitBudget(a, b, budget int) (int, int) {
	return clip.Budgets(int64(a), int64(b), budget)
}
