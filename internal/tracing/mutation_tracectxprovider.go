//go:build mutation_tracectxprovider

// Mutant: a span's provider in the context is ignored: a traced caller gets no corral spans.
// Guarantee: 6. honest results
// Caught: ./internal/tracing TestSpansFollowTheContextsProviderWithNoneInstalled

package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
)

// provider, mutated for the CI's mutation step (.ci/mutations): only the
// installed provider counts, so a caller whose context carries its own
// SDK's span, and installed nothing, gets no corral spans. Built only
// with the tag mutation_tracectxprovider.
func provider(ctx context.Context) trace.TracerProvider { return Provider() }
