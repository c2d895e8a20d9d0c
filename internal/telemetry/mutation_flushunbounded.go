//go:build mutation_flushunbounded

// Mutant: At exit corral waits for its exporter for as long as the exporter takes: a stuck exporter holds corral's exit.
// Guarantee: 1. bounded return (the flush at exit is bounded)
// Caught: ./internal/telemetry TestShutdownKillsAnExporterThatOverstays

package telemetry

import "time"

// waitBound, mutated for the CI's mutation step (.ci/mutations): a day.
// Built only with the tag mutation_flushunbounded.
func (e *exporter) waitBound() time.Duration { return 24 * time.Hour }
