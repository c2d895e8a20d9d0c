package main

// Windows has no SIGQUIT or job control: nothing to catch.
func catchStraySignals() {}
