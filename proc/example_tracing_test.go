//go:build unix

package proc_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/corralrun/corral/proc"
)

// A program that traces installs its provider for corral: each run is a
// span, proc.run, under the span its context carries, or the root of a
// trace of its own when the context carries none. (Without the install,
// the first run would still be traced, from the provider of the caller's
// span; the second would not.)
func ExampleSetTracerProvider() {
	spans := tracetest.NewInMemoryExporter() // a real program exports over OTLP, batched
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	proc.SetTracerProvider(tp)
	defer proc.SetTracerProvider(nil)

	ctx, job := tp.Tracer("example").Start(context.Background(), "nightly-job")
	if _, err := proc.Run(ctx, &proc.Spec{Args: []string{"true"}}); err != nil {
		fmt.Println("error:", err)
	}
	job.End()
	if _, err := proc.Run(context.Background(), &proc.Spec{Args: []string{"true"}}); err != nil {
		fmt.Println("error:", err)
	}

	names := map[string]string{}
	for _, s := range spans.GetSpans() {
		names[s.SpanContext.SpanID().String()] = s.Name
	}
	for _, s := range spans.GetSpans() {
		parent := "the root of its trace"
		if s.Parent.IsValid() {
			parent = "under " + names[s.Parent.SpanID().String()]
		}
		fmt.Println(s.Name, parent)
	}
	// Output:
	// proc.run under nightly-job
	// nightly-job the root of its trace
	// proc.run the root of its trace
}
