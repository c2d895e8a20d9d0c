// Command corral-shim is corral's helper inside the trees of its runs: a
// run's init, an enclosure's holder and the cgroup tier's guardian
// (internal/shim), and nothing else, so that starting one costs a small
// Go program's start rather than the whole corral command's. corral
// starts it, with CORRAL_SHIM naming the role, when it sits beside
// corral's executable and was built from the same source (go install
// ./cmd/... puts both there); without it corral starts its shims from
// itself (internal/shimprog). It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	// The shim runs from this package's initialisation when CORRAL_SHIM
	// is set, and the process exits there.
	_ "github.com/corralrun/corral/internal/shim"
)

func main() {
	fmt.Fprintln(os.Stderr, "corral-shim: corral's helper for its runs (init, holder, guardian); corral starts it, not a user")
	os.Exit(2)
}
