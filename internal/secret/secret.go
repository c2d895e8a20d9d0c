// Package secret takes a secret into the process without leaving it where
// the commands the process runs can read it: in their environment, in the
// process's own environment block or command line as the kernel shows them
// to other processes (/proc/PID/environ, /proc/PID/cmdline), or in a
// descriptor they inherit.
//
// A variable removed with os.Unsetenv is gone from what the process passes
// on, but not from /proc/PID/environ, which shows the block the process
// started with: a command running as the same user (or as root) reads it
// there, through its parent's pid. FromEnv and ScrubArg overwrite the
// secret in those blocks (Linux); elsewhere they only keep it from the
// commands' environment, and a command of the same user may still find it.
package secret

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// ScrubArg overwrites value wherever it is a command-line argument of the
// process, or the value of one (--flag=value), in the command line the
// kernel shows (Linux); the caller keeps its own copy first (strings.Clone),
// since os.Args and the flag values parsed from it share those bytes.
func ScrubArg(value string) error {
	if value == "" {
		return nil
	}
	return scrubArg(value)
}

// FromFile reads a secret from path and returns it without surrounding
// white space. path is a file private to its owner (a regular file that
// its group or others may read is refused), or a descriptor such as
// /dev/fd/N, a pipe from the shell's process substitution <(...), which
// leaves nothing on disk; the descriptor is closed after reading, so that
// no command inherits it.
func FromFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if st.Mode().IsRegular() && st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by its group or others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := readAll(f)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	closeInherited(path)
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}

// maxSecret bounds what FromFile reads.
const maxSecret = 64 << 10

func readAll(f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
	if err == nil && len(b) > maxSecret {
		err = fmt.Errorf("longer than %d bytes: not a secret", maxSecret)
	}
	return b, err
}
