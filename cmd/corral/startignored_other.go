//go:build unix && !linux

package main

// startIgnored knows nothing of the signals this process was started with
// ignored, beyond SIGHUP and SIGINT, which the Go runtime leaves ignored
// (see signal.Ignored).
func startIgnored() (ignored [65]bool, ok bool) { return ignored, false }
