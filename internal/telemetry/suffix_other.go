//go:build !windows

package telemetry

const exeSuffix = ""
