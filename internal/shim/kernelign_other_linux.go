//go:build !amd64 && !arm64

package shim

import "syscall"

// ignoreInKernel reports false: the kernel's struct sigaction is not
// spelled out here for this architecture, and the signals are caught
// through os/signal instead.
func ignoreInKernel(...syscall.Signal) bool { return false }
