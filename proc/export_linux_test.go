package proc

// SweepBoxTmps is sweepBoxTmps, for the tests of proc_test.
var SweepBoxTmps = sweepBoxTmps
