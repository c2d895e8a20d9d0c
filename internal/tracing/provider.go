//go:build !mutation_tracectxprovider

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// provider is the TracerProvider a span started under ctx comes from: the
// installed one (SetProvider), else that of the span ctx carries, so that
// a program that traces gets corral's spans under its own with no setup
// (and an unsampled parent of the SDK still gets the SDK's parent-based
// decision); nil when there is neither.
func provider(ctx context.Context) trace.TracerProvider {
	if tp := Provider(); tp != nil {
		return tp
	}
	if s := trace.SpanFromContext(ctx); s != noSpan {
		return s.TracerProvider()
	}
	return nil
}
