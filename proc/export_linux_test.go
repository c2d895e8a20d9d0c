package proc

// SweepBoxTmps is sweepBoxTmps, for the tests of proc_test.
var SweepBoxTmps = sweepBoxTmps

// MaxLockedClocks is how many runs may hold a thread for corral's own
// clock at once.
const MaxLockedClocks = maxLockedClocks

// LockedClocksPeak returns the most clocks that were locked at once since
// the last call, and starts the count again from those locked now.
func LockedClocksPeak() int64 {
	return lockedPeak.Swap(lockedNow.Load())
}
