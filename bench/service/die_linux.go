package main

import (
	"os/exec"
	"syscall"
)

// dieWithBench has cmd stopped (SIGTERM: it drains) if the benchmark
// dies before stopping it, as a failed check does (os.Exit).
func dieWithBench(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
