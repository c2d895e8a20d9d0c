//go:build unix && !mutation_timeoutstdin

package main

import "os"

// timeoutStdio is what the command of corral timeout reads and writes:
// this process's own standard input, output and error, with no pipe in
// between.
func timeoutStdio() *[3]*os.File { return &[3]*os.File{os.Stdin, os.Stdout, os.Stderr} }
