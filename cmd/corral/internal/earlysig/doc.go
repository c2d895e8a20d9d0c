// Package earlysig catches corral run's signals while the program is
// still starting: from this package's initialization, which needs nothing
// beyond os/signal and so comes before most of corral's (the telemetry
// API, the network stack, the supervision core), not from main.
//
// Catching a signal for the first time is a round trip with the Go
// runtime's signal thread, about 60 µs each on a small virtual machine:
// corral run catches ten, and its command starts only once all are caught
// (proc.Spec.Hold), so that no signal meant for the run ends corral
// before it can pass it on. Begun here, the round trips go on beside the
// other packages' initialization, the flags and the run's set-up, rather
// than after them (about 0.1 ms of a `corral run -- /bin/true`,
// docs/benchmarks.md).
package earlysig
