//go:build !mutation_flushunbounded

package telemetry

import "time"

// waitBound is how long Shutdown waits for the companion after the end of
// its input before killing it: the companion exits FlushTimeout after its
// input ends, and is given a little more to get there.
func (e *exporter) waitBound() time.Duration { return e.header.FlushTimeout + 500*time.Millisecond }
