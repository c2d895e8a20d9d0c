//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/corralrun/corral/proc"
)

// lookCommand finds a command as execvp does: a name with a slash is used
// as it is; any other is looked for in each directory of PATH (an empty
// entry is the current directory). A candidate that exists but cannot be
// executed (a directory, a file without the execute permission) makes the
// search end in EACCES, "found but cannot be invoked" (126), if no later
// directory has the command; nothing found at all is ENOENT (127).
func lookCommand(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, ok := os.LookupEnv("PATH")
	if !ok {
		path = "/bin:/usr/bin" // the C library's default
	}
	denied := false
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		err := unix.Access(p, unix.X_OK)
		if err == nil {
			if fi, serr := os.Stat(p); serr == nil && fi.Mode().IsRegular() {
				return p, nil
			}
			denied = true
			continue
		}
		if errors.Is(err, unix.EACCES) {
			denied = true
		}
	}
	if denied {
		return "", fmt.Errorf("%w: %w", proc.ErrNotExecutable, &os.PathError{Op: "exec", Path: name, Err: syscall.EACCES})
	}
	return "", fmt.Errorf("%w: %w", proc.ErrNotFound, &os.PathError{Op: "exec", Path: name, Err: syscall.ENOENT})
}

// errnoText is the C library's message for the errno err carries ("No
// such file or directory"), or err's own text.
func errnoText(err error) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err.Error()
	}
	s := errno.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
