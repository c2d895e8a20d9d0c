// Package initelf is the init of a plain or sandboxed run (see
// internal/shim) as a native program: a static ELF executable of 20 KB
// that corral writes to a sealed memory file and executes, so that a run
// does not pay a Go program's start, and its round trips between
// threads, before its command.
//
// It keeps the Go init's contract and speaks its protocol. It serves plain
// runs and sandboxes (not a guard's alone), which it builds and confines
// from the plan corral computed (internal/sandbox.Native); it answers a
// sandboxed command's connect() of a Unix socket path that is not there,
// or is no socket, as the gate would, and at the first connect() the gate
// must make it executes the Go init in its own process to serve the gate,
// that call first (internal/shim's ResumeEnv). Guards
// alone, enclosures and other users' runs keep the Go init, as do other
// architectures and kernels or policies that refuse to execute a memory
// file. Its source is
// testdata/init_amd64.c, freestanding C compiled position-independent with
// no C library (testdata/gen.sh); TestCodeIsItsSourceCompiled checks the
// bytes against the source where the same compiler is installed.
package initelf

import (
	"runtime"

	"github.com/corralrun/corral/internal/guardelf"
)

// Image returns the native init as a static ELF executable for this
// machine, or nil where there is none (only Linux on amd64 has one). Each
// call returns a new slice.
func Image() []byte {
	if runtime.GOOS != "linux" || len(code) == 0 {
		return nil
	}
	return guardelf.Executable(62, code) // EM_X86_64
}
