package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/cliflag"
	"github.com/corralrun/corral/internal/tracing"
	"github.com/corralrun/corral/service"
)

// serveTelemetryHelp ends corral serve's usage.
const serveTelemetryHelp = `
Telemetry: with an OTLP endpoint (--otel-endpoint, or the standard
OTEL_EXPORTER_OTLP_ENDPOINT) the service exports a trace of every task:
its submission (a child of the submitter's W3C traceparent header, when
it sends one), each attempt's execution with its wait in the queue, and
the run below it (a headless turn with its tool calls and teardown, or
the process tree). A retry continues its run's trace on whichever worker
runs it; each fire of a schedule starts a trace of its own; every run
gets TRACEPARENT. The standard OTEL_* variables configure it; without an
endpoint nothing of it runs. Spans record no prompt or output unless
--otel-content is given. docs/observability.md describes every span.
`

// serveTelemetry are the telemetry flags of corral serve: those of the
// other commands, and the agent's flush window of corral headless.
type serveTelemetry struct {
	tf          *cliflag.Telemetry
	flushWindow *time.Duration
}

func addServeTelemetryFlags(fs *flag.FlagSet) *serveTelemetry {
	return &serveTelemetry{
		tf:          cliflag.AddTelemetry(fs),
		flushWindow: fs.Duration("otel-flush-window", headless.DefaultFlushWindow, "with telemetry on, time a headless agent may take after its turn to flush its own telemetry and exit (0: none)"),
	}
}

// configure turns telemetry on when it is configured, and then has cfg's
// service trace its tasks. The service's own TRACEPARENT is not the
// parent of anything: each task is a trace of its own, or its submitter's.
func (t *serveTelemetry) configure(cfg *service.Config) {
	ctx := t.tf.Start("serve", cliflag.Version())
	if !t.tf.On() {
		return
	}
	cfg.Trace = true
	cfg.TraceContent = tracing.Recording(ctx)
	cfg.FlushWindow = cliflag.NegIfZero(*t.flushWindow)
	cfg.Env = append(cfg.Env, t.tf.Env()...)
	cfg.Secrets = append(cfg.Secrets, otlpHeaderValues(os.Getenv)...)
}

// otlpHeaderValues returns the values of the headers the exporter sends
// (a collector's API key): secrets, masked wherever a run's output is
// kept, should a run print them.
func otlpHeaderValues(getenv func(string) string) []string {
	var out []string
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(getenv(name), ",") {
			if _, v, ok := strings.Cut(kv, "="); ok && len(strings.TrimSpace(v)) >= 8 {
				out = append(out, strings.TrimSpace(v))
			}
		}
	}
	return out
}
