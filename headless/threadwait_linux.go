package headless

import (
	"time"

	"github.com/corralrun/corral/internal/procfs"
)

// threadWait returns the calling thread's id and its run-queue wait so far
// (see Finalization).
func threadWait() (int, time.Duration) { return procfs.ThreadRunWait() }
