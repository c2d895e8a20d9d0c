package main

import "os"

// holdSignals: Windows has no job control.
var holdSignals []os.Signal

func isHoldSignal(os.Signal) bool { return false }
