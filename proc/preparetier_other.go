//go:build !linux

package proc

// prepareTier: only Linux has a tier to prepare (the cgroup tier's
// directory and guardian).
func prepareTier(*Spec) {}
