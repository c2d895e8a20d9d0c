package proc

import (
	"strings"

	"github.com/corralrun/corral"
)

// buildEnv returns the environment for a command: the base that mode
// selects from parent, then add on top, later entries winning. Entries
// without "=" are ignored.
func buildEnv(mode corral.EnvMode, allow, add, parent []string) []string {
	if mode == corral.EnvInherit && len(add) == 0 {
		return parent // already the caller's own copy
	}
	var base []string
	switch mode {
	case corral.EnvClean:
	case corral.EnvAllowlist:
		for _, kv := range parent {
			k, _, ok := strings.Cut(kv, "=")
			if ok && allowed(k, allow) {
				base = append(base, kv)
			}
		}
	default:
		base = parent
	}
	out := make([]string, 0, len(base)+len(add))
	index := make(map[string]int, len(base)+len(add))
	for _, list := range [][]string{base, add} {
		for _, kv := range list {
			k, _, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				continue
			}
			if i, seen := index[envKey(k)]; seen {
				out[i] = kv
				continue
			}
			index[envKey(k)] = len(out)
			out = append(out, kv)
		}
	}
	return out
}
