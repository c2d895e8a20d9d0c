// Command corral-otlp exports corral's spans over OTLP. corral starts it
// when telemetry is on (an OTLP endpoint is configured) and writes to its
// standard input a header with the OTEL_* configuration and then the
// spans it ended (internal/telemetry/wire). It
// runs the OpenTelemetry Go SDK's batch span processor and the standard
// OTLP trace exporter of the protocol asked for (OTEL_EXPORTER_OTLP_PROTOCOL
// or OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: http/protobuf, the default, or
// grpc), which read the other OTEL_EXPORTER_OTLP_* variables themselves;
// the spans' resource comes from OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES over service.name "corral".
//
// It ignores SIGINT, SIGTERM and SIGHUP, which reach it with the rest of
// corral's process group: it ends with its input, when corral is done or
// has died, SIGKILL included, and then exports what it received within
// the header's flush timeout and exits. It is not meant to be run by hand.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/corralrun/corral/internal/telemetry/wire"
)

func main() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	harden()
	if err := run(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "corral-otlp:", err)
		os.Exit(1)
	}
}

// run reads the header and the spans from in and exports them; it
// returns once in has ended and the last spans were exported, or the
// flush timeout passed.
func run(in io.Reader) error {
	r := bufio.NewReaderSize(in, 1<<20)
	line, err := r.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil // corral ended before sending anything
		}
		return fmt.Errorf("reading the header: %w", err)
	}
	var h wire.Header
	if err := json.Unmarshal(line, &h); err != nil {
		return fmt.Errorf("the header: %w", err)
	}
	applyEnv(h.Env)
	p, err := newPipeline(context.Background(), &h)
	if err != nil {
		drain(r)
		return err
	}
	var bad int
	wr := wire.NewReader(r)
	for {
		var sp wire.Span
		err := wr.Next(&sp)
		if errors.Is(err, wire.ErrCorrupt) {
			if bad == 0 {
				fmt.Fprintln(os.Stderr, "corral-otlp: skipping an unreadable span:", err)
			}
			bad++
			continue
		}
		if err != nil {
			break // the end of the input (or a broken pipe: corral is gone)
		}
		p.add(&sp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.FlushTimeout)
	defer cancel()
	if err := p.shutdown(ctx); err != nil {
		return fmt.Errorf("the final export: %w", err)
	}
	if bad > 0 {
		return fmt.Errorf("%d unreadable spans were skipped", bad)
	}
	return nil
}

// applyEnv sets the header's variables in this process's environment,
// where the SDK reads them. Set this way they stay out of
// /proc/PID/environ, which shows what the process was started with.
func applyEnv(env []string) {
	for _, kv := range env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				os.Setenv(kv[:i], kv[i+1:])
				break
			}
		}
	}
}

// drain reads in to its end, so that corral's writes never block on an
// exporter that could not start.
func drain(r io.Reader) { io.Copy(io.Discard, r) }
