package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/corralrun/corral/internal/otlpsink"
	"github.com/corralrun/corral/internal/tracing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if exporterDir != "" {
		os.RemoveAll(exporterDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	exporterOnce sync.Once
	exporterPath string
	exporterDir  string
)

// companion builds corral-otlp once for the package's tests.
func companion(t *testing.T) string {
	t.Helper()
	exporterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "corral-otlp-test-")
		if err != nil {
			t.Fatal(err)
		}
		exporterDir = dir
		exporterPath = otlpsink.BuildExporter(t, dir)
	})
	if exporterPath == "" {
		t.Fatal("corral-otlp could not be built")
	}
	return exporterPath
}

func config(t *testing.T, endpoint, protocol string) Config {
	return Config{Endpoint: endpoint, Protocol: protocol, Exporter: companion(t), Env: []string{"OTEL_BSP_SCHEDULE_DELAY=50"},
		Command: "test", Version: "v9.9.9", FlushTimeout: 10 * time.Second, Warn: func(m string) { t.Log("warn:", m) }}
}

// TestProviderExportsToARealReceiver records a small tree under a remote
// parent and checks it arrives whole, over both protocols, with its
// attributes' types, events, status and resource.
func TestProviderExportsToARealReceiver(t *testing.T) {
	sink := otlpsink.Start(t)
	for _, tc := range []struct{ proto, endpoint string }{{"http/protobuf", sink.HTTP}, {"grpc", sink.GRPC}} {
		t.Run(strings.ReplaceAll(tc.proto, "/", "_"), func(t *testing.T) {
			sink.Reset()
			p, err := Start(config(t, tc.endpoint, tc.proto))
			if err != nil || p == nil {
				t.Fatalf("Start: %v, %v", p, err)
			}
			const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			ctx := tracing.FromEnv(context.Background(), func(k string) string {
				if k == tracing.EnvTraceParent {
					return parent
				}
				return ""
			})
			tr := p.Tracer("corral/test")
			ctx, root := tr.Start(ctx, "root", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attribute.Int("n", 3)))
			_, child := tr.Start(ctx, "child")
			child.SetAttributes(attribute.String("s", "v"), attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.StringSlice("ss", []string{"a", "b"}))
			child.RecordError(errors.New("boom"))
			child.SetStatus(codes.Error, "it failed")
			child.End()
			root.SetStatus(codes.Ok, "ignored")
			root.End()
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans, ok := sink.Wait(10*time.Second, func(s []otlpsink.Span) bool { return len(s) >= 2 })
			if !ok || len(spans) != 2 {
				t.Fatalf("got %d spans: %+v", len(spans), spans)
			}
			r, c := otlpsink.Named(spans, "root"), otlpsink.Named(spans, "child")
			if len(r) != 1 || len(c) != 1 {
				t.Fatalf("spans %+v", spans)
			}
			if r[0].TraceID != "0af7651916cd43dd8448eb211c80319c" || r[0].ParentID != "b7ad6b7169203331" || c[0].ParentID != r[0].SpanID || c[0].TraceID != r[0].TraceID {
				t.Errorf("parentage: root %+v child %+v", r[0], c[0])
			}
			if r[0].Kind != "Server" || r[0].Status != "Ok" || r[0].Attrs["n"] != int64(3) {
				t.Errorf("root %+v", r[0])
			}
			a := c[0].Attrs
			if a["s"] != "v" || a["b"] != true || a["f"] != 1.5 || len(a["ss"].([]any)) != 2 || c[0].Status != "Error" || c[0].StatusMessage != "it failed" {
				t.Errorf("child %+v", c[0])
			}
			if len(c[0].Events) != 1 || c[0].Events[0].Name != "exception" || c[0].Events[0].Attrs["exception.message"] != "boom" {
				t.Errorf("events %+v", c[0].Events)
			}
			if c[0].Resource["service.name"] != "corral" || c[0].Resource["service.version"] != "v9.9.9" || c[0].Scope != "corral/test" {
				t.Errorf("resource %v scope %q", c[0].Resource, c[0].Scope)
			}
		})
	}
}

// TestServiceNameAndResourceFromTheEnvironment: OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES, read by the SDK in the companion, win.
func TestServiceNameAndResourceFromTheEnvironment(t *testing.T) {
	sink := otlpsink.Start(t)
	c := config(t, "", "")
	c.Env = []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.HTTP, "OTEL_SERVICE_NAME=agents-ci", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test,team=platform"}
	p, err := Start(c)
	if err != nil || p == nil {
		t.Fatalf("Start: %v, %v", p, err)
	}
	_, s := p.Tracer("x").Start(context.Background(), "one")
	s.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans, ok := sink.Wait(10*time.Second, func(s []otlpsink.Span) bool { return len(s) == 1 })
	if !ok {
		t.Fatalf("spans %+v", spans)
	}
	if r := spans[0].Resource; r["service.name"] != "agents-ci" || r["team"] != "platform" || r["deployment.environment"] != "test" {
		t.Errorf("resource %v", r)
	}
}

// TestShutdownIsBoundedWhenTheCollectorHangs: a collector that accepts
// and never answers costs the flush timeout, no more, and the companion
// does not outlive Shutdown.
func TestShutdownIsBoundedWhenTheCollectorHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(proto, "/", "_"), func(t *testing.T) {
			c := config(t, "http://"+ln.Addr().String(), proto)
			c.FlushTimeout = time.Second
			p, err := Start(c)
			if err != nil {
				t.Fatal(err)
			}
			_, s := p.Tracer("x").Start(context.Background(), "one")
			s.End()
			began := time.Now()
			err = p.Shutdown(context.Background())
			took := time.Since(began)
			t.Logf("Shutdown after %v: %v", took, err)
			if took > c.FlushTimeout+3*time.Second {
				t.Errorf("Shutdown took %v with a flush timeout of %v", took, c.FlushTimeout)
			}
			if err == nil {
				t.Error("a failed export was not reported")
			}
			if st := p.exp.cmd.ProcessState; st == nil {
				t.Error("the companion was not waited for")
			}
		})
	}
}

// TestShutdownKillsAnExporterThatOverstays: an exporter that never exits
// (stuck, whatever it is stuck on) is killed once the flush timeout and
// a little more have passed: corral's exit stays bounded, and the exporter
// does not outlive it.
func TestShutdownKillsAnExporterThatOverstays(t *testing.T) {
	script := t.TempDir() + "/stuck-exporter"
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Config{Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9"}, Exporter: script, FlushTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, s := p.Tracer("x").Start(context.Background(), "one")
	s.End()
	done := make(chan error, 1)
	began := time.Now()
	go func() { done <- p.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		t.Logf("Shutdown after %v: %v", time.Since(began), err)
		if err == nil {
			t.Error("a killed exporter was not reported")
		}
	case <-time.After(5 * time.Second):
		p.exp.kill()
		<-done
		t.Fatalf("Shutdown still waiting for the exporter after %v (flush timeout 300ms)", time.Since(began))
	}
	if p.exp.cmd.ProcessState == nil {
		t.Error("the exporter was not waited for")
	}
}

// TestNothingStartsWhenTelemetryIsOff: no endpoint, or the SDK disabled,
// or the exporter none: Start returns nil and nothing runs.
func TestNothingStartsWhenTelemetryIsOff(t *testing.T) {
	for _, env := range [][]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_SDK_DISABLED=true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_TRACES_EXPORTER=none"},
	} {
		p, err := Start(Config{Env: env, Exporter: "/nonexistent/corral-otlp"})
		if p != nil || err != nil {
			t.Errorf("env %v: %v, %v; want nil, nil", env, p, err)
		}
	}
	// On, but no span ended: the companion is never started.
	p, err := Start(Config{Env: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:1"}, Exporter: "/nonexistent/corral-otlp"})
	if err != nil || p == nil {
		t.Fatalf("Start: %v, %v", p, err)
	}
	if err := p.Shutdown(context.Background()); err != nil || p.exp.cmd != nil {
		t.Errorf("Shutdown: %v; companion %v", err, p.exp.cmd)
	}
}

// TestMissingExporterIsAnError: telemetry asked for, and no companion.
func TestMissingExporterIsAnError(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(Config{Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1"}})
	if !errors.Is(err, ErrNoExporter) {
		t.Errorf("err %v, want ErrNoExporter", err)
	}
}

// TestSamplers: the OTEL_TRACES_SAMPLER decisions.
func TestSamplers(t *testing.T) {
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1}, SpanID: [8]byte{1}, TraceFlags: trace.FlagsSampled, Remote: true})
	unsampledParent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1}, SpanID: [8]byte{1}, Remote: true})
	low, high := trace.TraceID{15: 1}, trace.TraceID{8: 0xff, 15: 0xff}
	for _, tc := range []struct {
		name, arg string
		parent    trace.SpanContext
		id        trace.TraceID
		want      bool
	}{
		{"", "", trace.SpanContext{}, low, true},
		{"", "", unsampledParent, low, false},
		{"", "", sampled, low, true},
		{"always_off", "", sampled, low, false},
		{"always_on", "", unsampledParent, low, true},
		{"parentbased_always_off", "", trace.SpanContext{}, low, false},
		{"parentbased_always_off", "", sampled, low, true},
		{"traceidratio", "0.5", trace.SpanContext{}, low, true},
		{"traceidratio", "0.5", trace.SpanContext{}, high, false},
		{"parentbased_traceidratio", "0.5", sampled, high, true},
	} {
		s, err := parseSampler(tc.name, tc.arg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.sample(tc.parent, tc.id); got != tc.want {
			t.Errorf("%s(%s) parent %v id %v: %v, want %v", tc.name, tc.arg, tc.parent.IsValid(), tc.id, got, tc.want)
		}
	}
	if _, err := parseSampler("jaeger_remote", ""); err == nil {
		t.Error("an unsupported sampler was accepted")
	}
}

// TestUnsampledSpansCarryTheirContext: a span the sampler leaves out
// records nothing, yet a process under it still gets its trace context.
func TestUnsampledSpansCarryTheirContext(t *testing.T) {
	p, err := Start(Config{Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_TRACES_SAMPLER=always_off"}, Exporter: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, s := p.Tracer("x").Start(context.Background(), "off")
	s.End()
	env := tracing.Env(ctx, []string{"A=1"})
	if s.IsRecording() || len(env) != 2 || !strings.HasSuffix(env[1], "-00") || !strings.HasPrefix(env[1], "TRACEPARENT=00-"+s.SpanContext().TraceID().String()) {
		t.Errorf("recording %v env %v", s.IsRecording(), env)
	}
	if err := p.Shutdown(context.Background()); err != nil || p.exp.cmd != nil {
		t.Errorf("Shutdown: %v; companion %v", err, p.exp.cmd)
	}
}
