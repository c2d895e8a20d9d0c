package cliflag

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/corralrun/corral/internal/redact"
	"github.com/corralrun/corral/internal/telemetry"
	"github.com/corralrun/corral/internal/tracing"
	"github.com/corralrun/corral/proc"
)

// TelemetryHelp ends the usage of the commands that export spans.
const TelemetryHelp = `
Telemetry: with an OTLP endpoint (--otel-endpoint, or the standard
OTEL_EXPORTER_OTLP_ENDPOINT) corral exports a trace of what it did, under
the caller's TRACEPARENT if it has one, and gives the processes it starts
TRACEPARENT and TRACESTATE so that their own telemetry joins the trace.
The standard OTEL_* variables configure it (protocol, headers, service
name, resource, sampler); without an endpoint nothing of it runs. Spans
record no command line, prompt or output unless --otel-content is given.
docs/observability.md describes every span and attribute.
`

// The telemetry of this corral process: nil while off. Every exit path of
// the CLI flushes it (main).
var activeTelemetry *telemetry.Provider

// Telemetry are the flags of the commands that export spans.
type Telemetry struct {
	endpoint, protocol, service *string
	flushTimeout                *time.Duration
	content                     *bool
	passEnv                     StringList
	cfg                         telemetry.Config
}

func AddTelemetry(fs *flag.FlagSet) *Telemetry {
	f := &Telemetry{
		endpoint:     fs.String("otel-endpoint", "", "export spans over OTLP to `URL` (default $OTEL_EXPORTER_OTLP_ENDPOINT; telemetry is off when neither is set)"),
		protocol:     fs.String("otel-protocol", "", "OTLP protocol: http/protobuf or grpc (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)"),
		service:      fs.String("otel-service-name", "", "service.name of the spans (default $OTEL_SERVICE_NAME, else corral)"),
		flushTimeout: fs.Duration("otel-flush-timeout", telemetry.DefaultFlushTimeout, "at exit, wait at most `DUR` for the spans to be exported"),
		content:      fs.Bool("otel-content", false, "record command lines, prompts, tool inputs and outputs in spans, secrets redacted (also $OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"),
	}
	fs.Var(&f.passEnv, "otel-pass-env", "pass the OTEL_* variable `NAME` (NAME* for a prefix) to the processes corral starts, as corral uses it (repeatable)")
	return f
}

// Start turns telemetry on if it is configured, and returns the context
// the command's work starts under: the caller's trace context
// (TRACEPARENT) and the content setting when telemetry is on,
// context.Background() when it is off. A missing exporter is reported on
// stderr, and the command runs without telemetry.
func (f *Telemetry) Start(command, version string) context.Context {
	ctx := context.Background()
	f.cfg = telemetry.Config{
		Endpoint: *f.endpoint, Protocol: *f.protocol, ServiceName: *f.service,
		FlushTimeout: *f.flushTimeout, Command: command, Version: version,
	}
	if !f.cfg.Enabled() {
		return ctx
	}
	p, err := telemetry.Start(f.cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "corral %s: telemetry: %v\n", command, err)
		return ctx
	}
	activeTelemetry = p
	// For corral's packages only. OpenTelemetry's global provider is left
	// alone in every program of corral's, corral serve and corral mcp
	// included: none of the libraries they link (River, pgx, the MCP SDK)
	// traces through it, and setting it would link go.opentelemetry.io/otel
	// and its propagators, which import net/http, into each of them.
	proc.SetTracerProvider(p)
	ctx = tracing.FromEnv(ctx, os.Getenv)
	if *f.content || strings.EqualFold(os.Getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"), "true") {
		ctx = tracing.WithContent(ctx, redact.New(redact.EnvValues(os.Environ())...))
	}
	return ctx
}

// On reports whether telemetry is on.
func (f *Telemetry) On() bool { return activeTelemetry != nil }

// Env returns the OTEL_* variables --otel-pass-env names, with the values
// corral uses (its flags over its environment), for the processes it
// starts.
func (f *Telemetry) Env() []string {
	if len(f.passEnv) == 0 {
		return nil
	}
	var out []string
	for _, kv := range f.cfg.OTELEnv() {
		k, _, _ := strings.Cut(kv, "=")
		for _, want := range f.passEnv {
			if p, ok := strings.CutSuffix(want, "*"); (ok && strings.HasPrefix(k, p)) || k == want {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}

// FlushTelemetry flushes the spans at exit, within the flush timeout; it
// runs on every exit path of the programs (their main), signals included, since
// every command returns from its signal handling.
func FlushTelemetry() {
	if activeTelemetry == nil {
		return
	}
	proc.SetTracerProvider(nil) // a span started now could not be exported
	if err := activeTelemetry.Shutdown(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "corral: telemetry:", err)
	}
	activeTelemetry = nil
}
