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

// LeanStarts counts the starts made from the lean thread.
func LeanStarts() int64 { return lean.starts.Load() }

// LeanRunning reports whether the lean thread exists.
func LeanRunning() bool {
	lean.mu.Lock()
	defer lean.mu.Unlock()
	return lean.reqs != nil
}

// LeanIdle is how long the lean thread outlives its last start.
const LeanIdle = leanIdle

// LeanKeep is how many children the lean thread may hand to the main thread.
const LeanKeep = leanKeep

// LeanTids returns the lean threads' tids, none while there are none.
func LeanTids() []int {
	lean.mu.Lock()
	defer lean.mu.Unlock()
	return append([]int(nil), lean.tids...)
}
