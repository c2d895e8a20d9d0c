//go:build linux

// Command otelserve measures what tracing costs corral serve, each figure
// beside its peer measured in the same run, interleaved: one `corral
// serve` per configuration (SQLite, its own data directory), telemetry
// off, on with the OTLP/HTTP exporter to a real receiver (the Collector's,
// in this process, so its decoding shares the machine), and on with an
// exporter that discards the spans (corral's own part of the cost). They
// take turns:
//
//   - latency: one trivial shell task (`true`) at a time, submitted over
//     HTTP; its time from creation to its recorded end (the service's
//     own timestamps), and as the client saw it (submit to the end
//     observed);
//   - throughput: batches of trivial tasks submitted at once to an agent
//     with 4 slots and overflow queue, from the first creation to the
//     last recorded end;
//
// and the CPU of each service and its exporter per task, from
// /proc/PID/stat. Run from the repository root: go run ./bench/otelserve.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/bench/internal/benchutil"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/otlpsink"
)

func main() {
	n := flag.Int("n", 300, "sequential tasks per configuration")
	rounds := flag.Int("rounds", 5, "throughput batches per configuration")
	batch := flag.Int("batch", 200, "tasks per throughput batch")
	flag.Parse()
	dir := benchutil.TempDir("", "corral-bench-otelserve-")
	defer os.RemoveAll(dir)
	corral := benchutil.BuildCorral(dir) // corral-mcp, corral-serve and corral-otlp beside it
	sink, err := otlpsink.New()
	benchutil.Check(err)
	defer sink.Close()
	discard := filepath.Join(dir, "discard")
	benchutil.Check(os.WriteFile(discard, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))

	configs := []*server{
		{name: "telemetry off"},
		{name: "on, spans discarded", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.HTTP, "CORRAL_OTLP_EXPORTER=" + discard}},
		{name: "on, OTLP/HTTP", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.HTTP}},
	}
	for i, s := range configs {
		s.start(corral, filepath.Join(dir, fmt.Sprint("data", i)))
		defer s.stop()
	}
	for _, s := range configs { // warm up
		for range 20 {
			s.one()
		}
		s.cpu, s.tasks = 0, 0
	}
	for range *n {
		for _, s := range configs {
			c0 := benchutil.CPUWithExporter(s.cmd.Process.Pid)
			lat, wall := s.one()
			s.cpu += benchutil.CPUWithExporter(s.cmd.Process.Pid) - c0
			s.tasks++
			s.lat, s.wall = append(s.lat, lat), append(s.wall, wall)
		}
	}
	for range *rounds {
		for _, s := range configs {
			c0 := benchutil.CPUWithExporter(s.cmd.Process.Pid)
			s.rates = append(s.rates, s.burst(*batch))
			s.cpu += benchutil.CPUWithExporter(s.cmd.Process.Pid) - c0
			s.tasks += *batch
		}
	}
	fmt.Printf("corral serve, trivial shell tasks (true); %d sequential and %d batches of %d per configuration, interleaved\n", *n, *rounds, *batch)
	fmt.Printf("%-22s %28s %28s %16s %18s\n", "", "creation -> end p50 / p90", "client submit -> end p50", "batch tasks/s", "CPU per task")
	base := configs[0]
	for _, s := range configs {
		fmt.Printf("%-22s %12.2f / %6.2f ms %+6.1f%% %17.2f ms %+6.1f%% %9.1f %+6.1f%% %9.2f ms %+6.1f%%\n", s.name,
			benchutil.Quantile(s.lat, 0.5), benchutil.Quantile(s.lat, 0.9), pct(benchutil.Quantile(s.lat, 0.5), benchutil.Quantile(base.lat, 0.5)),
			benchutil.Quantile(s.wall, 0.5), pct(benchutil.Quantile(s.wall, 0.5), benchutil.Quantile(base.wall, 0.5)),
			benchutil.Median(s.rates), pct(benchutil.Median(s.rates), benchutil.Median(base.rates)),
			perTask(s), pct(perTask(s), perTask(base)))
	}
	time.Sleep(6 * time.Second) // the batch processor's delay: what is in flight arrives
	fmt.Printf("spans received: %d\n", len(sink.Spans()))
}

// server is one corral serve of a configuration.
type server struct {
	name  string
	env   []string
	cmd   *exec.Cmd
	c     *client.Client
	lat   []time.Duration
	wall  []time.Duration
	rates []float64
	cpu   time.Duration
	tasks int
}

func (s *server) start(bin, data string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	benchutil.Check(err)
	addr := ln.Addr().String()
	ln.Close()
	benchutil.Check(os.MkdirAll(data, 0o700))
	s.cmd = exec.Command(bin, "serve", "--addr", addr, "--data", data, "--insecure-no-auth")
	s.cmd.Env = append(withoutOTEL(os.Environ()), s.env...)
	s.cmd.Stderr = os.Stderr
	benchutil.Check(s.cmd.Start())
	s.c = client.New("http://"+addr, "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			panic("corral serve did not start")
		}
	}
	_, err = s.c.CreateAgent(context.Background(), &client.Agent{Name: "t", Kind: corral.KindShell, MaxParallelTasks: 4, Overflow: corral.OverflowQueue, MaxBacklog: 10000})
	benchutil.Check(err)
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

// one runs a task alone: its creation-to-end time as recorded, and the
// client's submit-to-end.
func (s *server) one() (time.Duration, time.Duration) {
	t0 := time.Now()
	e, err := s.c.Submit(context.Background(), "t", "true", 0)
	benchutil.Check(err)
	e = s.wait(e.ID)
	return e.FinishedAt.Sub(e.CreatedAt), time.Since(t0)
}

// wait polls until execution id has ended.
func (s *server) wait(id string) *client.Execution {
	for {
		e, err := s.c.Execution(context.Background(), id)
		benchutil.Check(err)
		if e.Status.Terminal() {
			if e.Status != corral.StatusSucceeded {
				panic(fmt.Sprintf("task %s: %s %s", id, e.Status, e.Error))
			}
			return e
		}
		time.Sleep(time.Millisecond)
	}
}

// burst submits n tasks at once (8 submitters) and returns the tasks per
// second from the first creation to the last recorded end.
func (s *server) burst(n int) float64 {
	ids := make([]string, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				e, err := s.c.Submit(context.Background(), "t", "true", 0)
				benchutil.Check(err)
				ids[i] = e.ID
			}
		})
	}
	wg.Wait()
	var first, last time.Time
	for _, id := range ids {
		e := s.wait(id)
		if first.IsZero() || e.CreatedAt.Before(first) {
			first = e.CreatedAt
		}
		if e.FinishedAt.After(last) {
			last = *e.FinishedAt
		}
	}
	return float64(n) / last.Sub(first).Seconds()
}

func perTask(s *server) float64 { return float64(s.cpu.Microseconds()) / 1000 / float64(s.tasks) }

func pct(v, base float64) float64 { return (v/base - 1) * 100 }

func withoutOTEL(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "CORRAL_") || strings.HasPrefix(kv, "TRACEPARENT=")
	})
}
