package telemetry

const exeSuffix = ".exe"
