//go:build !windows

package proc

import "os"

// outputPipe returns a pipe for one of the command's output streams. On
// Unix the read end of os.Pipe is pollable, so read deadlines bound the
// drain.
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }
