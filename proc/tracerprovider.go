package proc

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/corralrun/corral/internal/tracing"
)

// SetTracerProvider installs tp as the OpenTelemetry TracerProvider of
// corral's spans: those of proc and of the packages built on it (shell,
// headless, mcpserver, service). A nil tp uninstalls it. It is safe for
// concurrent use: spans started after it returns come from tp; spans
// already started end with the provider that started them.
//
// Each of corral's spans starts from the first of:
//
//  1. the provider installed with SetTracerProvider;
//  2. else the provider of the span the context carries
//     (trace.SpanFromContext(ctx).TracerProvider()): a program that
//     traces with the SDK gets corral's spans under its own with no setup
//     at all, and a parent the SDK did not sample gets the SDK's decision
//     for its children (parent-based sampling leaves them out too);
//  3. else none: no span is started, and what it costs is a look at the
//     context. A context that carries only a remote span context (a
//     traceparent read from a header or TRACEPARENT, with no provider)
//     starts nothing either, and the processes corral starts under it
//     still get its TRACEPARENT.
//
// corral never reads OpenTelemetry's global provider
// (go.opentelemetry.io/otel), whose package links net/http and the TLS
// stack into every program that imports it. A program that wants the
// calls it makes without a span in their context traced to the global
// provider writes
//
//	proc.SetTracerProvider(otel.GetTracerProvider())
//
// which may come first thing in main: the global provider hands its
// spans to whatever provider otel.SetTracerProvider installs later.
func SetTracerProvider(tp trace.TracerProvider) { tracing.SetProvider(tp) }

// TracerProvider returns the provider SetTracerProvider installed, or nil
// when none is.
func TracerProvider() trace.TracerProvider { return tracing.Provider() }
