//go:build !mutation_tokenleak

package secret

import (
	"fmt"
	"os"
	"strings"
)

// FromEnv returns the value of the environment variable name, and removes
// it: from the environment the process passes on, and, on Linux, from its
// environment block, whose bytes it overwrites. The value returned is a
// copy, which nothing else holds. It fails when the variable is set but
// could not be scrubbed from the block; the variable is gone from the
// environment passed on all the same.
func FromEnv(name string) (string, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return "", nil
	}
	value := strings.Clone(v)
	os.Unsetenv(name)
	if err := scrubEnv(name, value); err != nil {
		return value, fmt.Errorf("removing %s from the process's environment block: %w", name, err)
	}
	return value, nil
}
