//go:build mutation_noflushwindow

// Mutant: A traced agent gets no flush window: its tree is stopped after the plain linger, its exporter killed mid-flush.
// Guarantee: traces: the agent's exporter is not killed mid-flush
// Caught: ./headless TestTracedTurnGivesTheAgentItsFlushWindow

package headless

import (
	"time"

	"github.com/corralrun/corral/internal/setting"
)

// DefaultFlushWindow: see flush.go.
const DefaultFlushWindow = 2 * time.Second

// lingerFor, mutated for the CI's mutation step (.ci/mutations): the
// flush window is skipped. Built only with the tag mutation_noflushwindow.
func (t *Turn) lingerFor(by FinalizedBy) time.Duration {
	if by != FinalizedByResult {
		return 0
	}
	return setting.Or(t.spec.Linger, DefaultLinger)
}
