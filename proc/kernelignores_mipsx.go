//go:build linux && (mips || mipsle || mips64 || mips64le) && !mutation_hupignoreunseen

package proc

import "syscall"

// kernelIgnores is os/signal's word alone on MIPS, whose kernel orders
// struct sigaction differently: false.
func kernelIgnores(syscall.Signal) bool { return false }
