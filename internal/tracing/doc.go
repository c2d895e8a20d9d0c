// Package tracing is what corral's library packages (proc, shell, headless,
// mcpserver) share to trace their work with the OpenTelemetry API, and only
// the API: their spans go to the global TracerProvider (otel.SetTracerProvider),
// under whatever span the caller's context carries. Without a provider the
// API's default does nothing, and costs a context value per span; corral's
// own provider (internal/telemetry) is installed by the CLI when telemetry is
// on.
//
// It also carries the W3C trace context into the environment of the
// processes corral starts (TRACEPARENT, TRACESTATE), reads it from
// corral's own, and decides whether a span may record content (prompts,
// commands, outputs): never unless the context asks for it (WithContent),
// and then only through the redactor.
package tracing
