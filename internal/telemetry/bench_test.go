package telemetry

import (
	"context"
	"os"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// BenchmarkSpan is the cost of one recorded span in corral's process:
// start, eight attributes, end, encoding and queueing (the companion
// discards what it reads).
func BenchmarkSpan(b *testing.B) {
	script := b.TempDir() + "/discard"
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	p, err := Start(Config{Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9"}, Exporter: script})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	tr := p.Tracer("bench")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, s := tr.Start(ctx, "proc.run")
		s.SetAttributes(attribute.Int("process.exit.code", 0), attribute.Bool("corral.timed_out", false), attribute.Bool("corral.cancelled", false),
			attribute.Int64("corral.stdout.bytes", 10), attribute.Int64("corral.stderr.bytes", 0), attribute.Int64("corral.duration_ms", 3),
			attribute.String("corral.containment", "cgroup"), attribute.String("process.executable.name", "bash"))
		s.End()
	}
}
