//go:build !linux

package proc

// RaiseOpenFileLimit raises this process's soft RLIMIT_NOFILE to its hard
// limit on Linux; elsewhere it does nothing (the Go runtime raises it on
// other Unix systems at start, and Windows has no such limit) and returns
// zeros.
func RaiseOpenFileLimit() (soft, hard uint64, err error) { return 0, 0, nil }

func raiseNoFile() {}

func checkCapacity(n int, s *Spec, callerFDs int64) error { return nil }

func limitCause(err error) error { return err }
