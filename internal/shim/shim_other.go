//go:build !linux

package shim

import (
	"fmt"
	"os"
)

func nameSelf() {}

func runInit() int {
	fmt.Fprintln(os.Stderr, "corral shim: the init runs on Linux only")
	return ExitShimFailed
}

func runGuardian() int {
	fmt.Fprintln(os.Stderr, "corral shim: the guardian runs on Linux only")
	return ExitShimFailed
}
