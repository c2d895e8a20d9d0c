//go:build !mutation_noflushwindow

package headless

import (
	"time"

	"github.com/corralrun/corral/internal/setting"
)

// DefaultFlushWindow is how long a traced agent may take, after the end
// of its turn, to flush its own telemetry and exit by itself before its
// tree is stopped (see Spec.FlushWindow).
const DefaultFlushWindow = 2 * time.Second

// lingerFor returns how long the agent may take to exit by itself after a
// turn that ended by by: none unless the agent ended its turn; otherwise
// Spec.Linger, or the flush window when the turn is traced (its span is
// recorded), whichever is longer.
func (t *Turn) lingerFor(by FinalizedBy) time.Duration {
	if by != FinalizedByResult {
		return 0
	}
	linger := setting.Or(t.spec.Linger, DefaultLinger)
	if t.trace.recording() {
		linger = max(linger, setting.Or(t.spec.FlushWindow, DefaultFlushWindow))
	}
	return linger
}
