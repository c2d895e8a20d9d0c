//go:build !linux

package main

import (
	"context"
	"fmt"
	"os"
	"time"
)

type serveScaleConfig struct {
	counts   []int
	sleep    time.Duration
	clients  int
	guard    string
	nofile   uint64
	bin      string
	deadline time.Duration
}

// runServeScale needs /proc to see the runs: Linux only.
func runServeScale(context.Context, serveScaleConfig) bool {
	fmt.Fprintln(os.Stderr, "bench: -serve-scale reads /proc: Linux only")
	return false
}
