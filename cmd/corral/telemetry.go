package main

import "github.com/corralrun/corral/internal/cliflag"

// The telemetry flags this program shares with corral-serve
// (internal/cliflag).
type telemetryFlags = cliflag.Telemetry

const telemetryHelp = cliflag.TelemetryHelp

var (
	addTelemetryFlags = cliflag.AddTelemetry
	flushTelemetry    = cliflag.FlushTelemetry
)
