//go:build !mutation_envallow

package proc

import "strings"

// allowed reports whether the variable name passes the allowlist: an
// entry is an exact name, or a prefix followed by "*".
func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(envKey(name), envKey(p)) {
				return true
			}
		} else if envKey(name) == envKey(a) {
			return true
		}
	}
	return false
}
