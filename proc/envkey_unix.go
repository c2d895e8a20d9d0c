//go:build !windows

package proc

func envKey(k string) string { return k }
