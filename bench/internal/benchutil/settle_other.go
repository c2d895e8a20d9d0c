//go:build !linux

package benchutil

// Settle does nothing here: the benchmarks that use it run on Linux.
func Settle(paths ...string) {}
