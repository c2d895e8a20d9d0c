//go:build linux

// Command otel measures what corral's telemetry costs, each figure beside
// its peer measured in the same run, interleaved:
//
//   - per-command time of run_command `true` in `corral mcp` (stdio, the
//     SDK's client): telemetry off, and on with the OTLP exporter over
//     HTTP and over gRPC to a real receiver (the Collector's, in this
//     process, so its decoding shares the machine), and on with an
//     exporter that discards the spans (corral's own part of the cost);
//     and, with -baseline, a corral built without telemetry;
//   - start-up of `corral --version` and `corral run -- /bin/true`,
//     telemetry off, beside the -baseline binary.
//
// Run from the repository root: go run ./bench/otel [-baseline PATH]. A
// baseline is a corral binary built from a revision before telemetry,
// for example: git archive REV | tar -x -C /tmp/base && (cd /tmp/base &&
// go build -o /tmp/corral-base ./cmd/corral).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/internal/otlpsink"
)

func main() {
	n := flag.Int("n", 600, "commands per configuration")
	starts := flag.Int("starts", 300, "start-ups per binary")
	baseline := flag.String("baseline", "", "a corral binary without telemetry, to compare with")
	flag.Parse()
	dir := benchutil.TempDir("", "corral-bench-otel-")
	defer os.RemoveAll(dir)
	corral := benchutil.BuildCorral(dir) // corral-mcp, corral-serve and corral-otlp beside it
	sink, err := otlpsink.New()
	benchutil.Check(err)
	defer sink.Close()

	configs := []config{{name: "telemetry off", bin: corral}}
	if *baseline != "" {
		configs = append([]config{{name: "baseline (no telemetry)", bin: *baseline}}, configs...)
	}
	discard := filepath.Join(dir, "discard")
	benchutil.Check(os.WriteFile(discard, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	configs = append(configs,
		config{name: "telemetry on, spans discarded", bin: corral, env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.HTTP, "CORRAL_OTLP_EXPORTER=" + discard}},
		config{name: "telemetry on, OTLP/HTTP", bin: corral, env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.HTTP}},
		config{name: "telemetry on, OTLP/gRPC", bin: corral, env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.GRPC, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}},
	)
	perCommand(configs, *n, dir)
	fmt.Printf("spans received: %d\n\n", len(sink.Spans()))
	if *baseline != "" {
		startUp(*baseline, corral, *starts)
	}
}

type config struct {
	name string
	bin  string
	env  []string
	cs   *mcp.ClientSession
	pid  int
	d    []time.Duration
	cpu  time.Duration // corral's own and its exporter's, over the measured commands
}

// perCommand runs n commands on each configuration's own corral mcp, one
// each in turn, so that the machine's drift reaches all alike.
func perCommand(configs []config, n int, dir string) {
	ctx := context.Background()
	for i := range configs {
		c := &configs[i]
		cmd := exec.Command(c.bin, "mcp", "--workdir", dir, "--probe-tools", "")
		cmd.Env = append(os.Environ(), c.env...)
		cmd.Stderr = os.Stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		benchutil.Check(err)
		c.cs, c.pid = cs, cmd.Process.Pid
		defer cs.Close()
		for range 20 { // warm up: the session, the exporter
			call(ctx, cs)
		}
		c.cpu = -benchutil.CPUWithExporter(c.pid)
	}
	for range n {
		for i := range configs {
			start := time.Now()
			call(ctx, configs[i].cs)
			configs[i].d = append(configs[i].d, time.Since(start))
		}
	}
	for i := range configs {
		configs[i].cpu += benchutil.CPUWithExporter(configs[i].pid)
	}
	fmt.Printf("## run_command `true` in corral mcp (%d each, interleaved)\n", n)
	fmt.Printf("wall: ms per command as the client sees it; cpu: ms of CPU per command in corral mcp itself and its exporter (not the commands' shells)\n")
	fmt.Printf("%-34s %8s %8s %8s %9s %8s %9s\n", "", "median", "p90", "p99", "vs off", "cpu", "vs off")
	var off, offCPU float64
	for _, c := range configs {
		if c.name == "telemetry off" {
			off, offCPU = benchutil.Quantile(c.d, 0.5), perCmd(c.cpu, n)
		}
	}
	for _, c := range configs {
		med, cpu := benchutil.Quantile(c.d, 0.5), perCmd(c.cpu, n)
		fmt.Printf("%-34s %8.3f %8.3f %8.3f %+8.1f%% %8.3f %+8.1f%%\n", c.name, med, benchutil.Quantile(c.d, 0.9), benchutil.Quantile(c.d, 0.99), 100*(med/off-1), cpu, 100*(cpu/offCPU-1))
	}
}

func perCmd(d time.Duration, n int) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }

func call(ctx context.Context, cs *mcp.ClientSession) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "true"}})
	benchutil.Check(err)
	if res.IsError {
		panic("run_command failed")
	}
}

// startUp times corral --version and corral run -- /bin/true, telemetry
// off, for the baseline and this tree, interleaved.
func startUp(baseline, corral string, n int) {
	fmt.Printf("## start-up, telemetry off (ms, %d each, interleaved)\n", n)
	fmt.Printf("%-44s %8s %8s %8s\n", "", "p10", "median", "p90")
	for _, args := range [][]string{{"--version"}, {"run", "--", "/bin/true"}} {
		var base, now []time.Duration
		for range n {
			base = append(base, timeRun(baseline, args))
			now = append(now, timeRun(corral, args))
		}
		for _, r := range []struct {
			name string
			d    []time.Duration
		}{{"baseline corral " + args[0], base}, {"corral " + args[0], now}} {
			fmt.Printf("%-44s %8.2f %8.2f %8.2f\n", r.name, benchutil.Quantile(r.d, 0.1), benchutil.Quantile(r.d, 0.5), benchutil.Quantile(r.d, 0.9))
		}
	}
}

func timeRun(bin string, args []string) time.Duration {
	cmd := exec.Command(bin, args...)
	cmd.Env = withoutOTEL(os.Environ())
	start := time.Now()
	benchutil.Check(cmd.Run())
	return time.Since(start)
}

func withoutOTEL(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return len(kv) > 5 && kv[:5] == "OTEL_" })
}
