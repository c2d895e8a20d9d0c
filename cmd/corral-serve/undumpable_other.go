//go:build unix && !linux

package main

// undumpable has no portable equivalent here: a task running as the same
// user can read the service's environment.
func undumpable() error { return nil }
