//go:build !linux

package headless

import "time"

// threadWait knows nothing of the scheduler outside Linux: nothing is
// subtracted from the wall clock (see Finalization).
func threadWait() (int, time.Duration) { return 0, 0 }
