// Package initelf is the init of a plain run (see internal/shim) as a
// native program: a static ELF executable of a few kilobytes that corral
// writes to a sealed memory file and executes, so that the subreaper and
// process-group tiers do not pay a Go program's start, and its round
// trips between threads, for every run.
//
// It keeps the Go init's contract and speaks its protocol; it serves only
// plain runs (no sandbox, no enclosure, no other user: those keep the Go
// init, which builds the sandbox and changes users). Its source is
// testdata/init_amd64.c, freestanding C compiled position-independent with
// no C library (testdata/gen.sh); TestCodeIsItsSourceCompiled checks the
// bytes against the source where the same compiler is installed. Other
// architectures, and kernels or policies that refuse to execute a memory
// file, use the Go init.
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
