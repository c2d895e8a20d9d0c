package tracing

import (
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// Tracer is a package's tracer, taken from the global provider at its
// first use (the zero value is ready; Scope must be set). A tracer taken
// before the CLI installs its provider follows it: the global provider
// delegates to the one installed later.
type Tracer struct {
	// Scope names the instrumentation scope: the package's import path.
	Scope string

	once sync.Once
	t    trace.Tracer
}

// Get returns the tracer.
func (t *Tracer) Get() trace.Tracer {
	t.once.Do(func() { t.t = otel.Tracer(t.Scope) })
	return t.t
}
