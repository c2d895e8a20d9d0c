// Package telemetry exports the CLI's spans over OTLP when the operator
// points corral at a collector, and costs nothing when not.
//
// Telemetry is on when an OTLP endpoint is given (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or Config.Endpoint from a flag) and
// neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says
// otherwise. Then Start returns a Provider: a TracerProvider of the
// OpenTelemetry API that records corral's spans in this process, samples
// them as OTEL_TRACES_SAMPLER says, and hands each ended span to
// corral-otlp, a small companion program built from this module that runs
// the OpenTelemetry Go SDK's batch span processor and its standard OTLP
// exporters (HTTP or gRPC, OTEL_EXPORTER_OTLP_PROTOCOL), configured by the
// standard OTEL_* variables, which it reads itself.
//
// Why a companion: linking the SDK, its exporters, protobuf and gRPC into
// corral costs every corral start (and every run, whose init is corral
// re-executed) their package initialisation, about 2.4 ms of an 8.5 ms
// start on the 2-core reference machine, telemetry on or not; Go runs
// every linked package's init. corral links only the API (whose no-op
// default does nothing), and the companion is started only when telemetry
// is on, at the first ended span.
//
// Every exit path of the CLI calls Shutdown, which flushes with a bound:
// spans already ended reach the companion, which exports them within
// Config.FlushTimeout after its input ends, even when corral itself is
// killed right after (a SIGTERM before the exporter flushed loses no ended
// span); corral waits for it that long, and then kills it.
package telemetry
