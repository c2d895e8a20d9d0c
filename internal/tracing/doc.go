// Package tracing is what corral's library packages (proc, shell,
// headless, mcpserver, service) share to trace their work with the
// OpenTelemetry API, and only the API packages trace, attribute and codes:
// never go.opentelemetry.io/otel itself or its propagation package, which
// import net/http, so that a program linking proc (the corral CLI among
// them) does not link the HTTP stack to find a tracer.
//
// Each package's Tracer starts a span from the provider installed with
// SetProvider (proc.SetTracerProvider), else from the provider of the span
// the context carries, else starts none (see proc.SetTracerProvider for
// the rule as users read it). With no provider a span costs a context
// lookup. corral's own programs install theirs (internal/telemetry's) when
// telemetry is on.
//
// It also carries the W3C trace context into the environment of the
// processes corral starts (TRACEPARENT, TRACESTATE), reads it from
// corral's own and from headers, formatted and parsed here, and decides
// whether a span may record content (prompts, commands, outputs): never
// unless the context asks for it (WithContent), and then only through the
// redactor.
package tracing
