//go:build !linux

package sandbox

// namespaceID refuses: the task guard is built for Linux only.
func namespaceID(string) (string, error) { return "", unavailable() }

// ProbeGuard reports the task guard unavailable: it is built for Linux
// only.
func ProbeGuard() error { return unavailable() }
