//go:build !linux

package recovery

// Without /proc, workers are judged by their lease alone.
func bootID() string { return "" }

func pidStart(int) uint64 { return 0 }
