package main

// corral timeout needs process groups and POSIX signals; on Windows the
// program never takes the name timeout.
func invokedAsTimeout(string) bool { return false }

func gnuTimeout(string, []string) int { return exitCorralFailed }
