package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/fakemodel"
	"github.com/corralrun/corral/internal/otlpsink"
	"github.com/corralrun/corral/internal/testutil"
)

// End to end with a real OTLP receiver (the Collector's, in this test
// binary): the corral binary exports its spans through corral-otlp, built
// beside it, over HTTP and gRPC.

var buildExporterOnce sync.Once

// withExporter builds corral-otlp beside the corral binary, where corral
// finds it.
func withExporter(t *testing.T) {
	t.Helper()
	buildExporterOnce.Do(func() { otlpsink.BuildExporter(t, filepath.Dir(corralBin)) })
	if _, err := os.Stat(filepath.Join(filepath.Dir(corralBin), "corral-otlp")); err != nil {
		t.Fatalf("corral-otlp: %v", err)
	}
}

// protocols are the OTLP protocols and the sink's endpoint for each.
func protocols(s *otlpsink.Sink) map[string]string {
	return map[string]string{"http": s.HTTP, "grpc": s.GRPC}
}

func otelEnv(endpoint, proto string) []string {
	p := "http/protobuf"
	if proto == "grpc" {
		p = "grpc"
	}
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=" + p, "OTEL_BSP_SCHEDULE_DELAY=100"}
}

const callerTrace = "0af7651916cd43dd8448eb211c80319c"
const callerSpan = "b7ad6b7169203331"
const callerParent = "TRACEPARENT=00-" + callerTrace + "-" + callerSpan + "-01"

var seenTraceparent = regexp.MustCompile(`traceparent=00-([0-9a-f]{32})-([0-9a-f]{16})-01`)

func baseEnv() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")} }

// TestOTLPRunIsTheCallersChildAndTheCommandsParent: corral run's span is a
// child of the caller's TRACEPARENT, the command sees TRACEPARENT naming
// that span, and a timeout's teardown is its child; over both protocols.
func TestOTLPRunIsTheCallersChildAndTheCommandsParent(t *testing.T) {
	withExporter(t)
	sink := otlpsink.Start(t)
	for proto, endpoint := range protocols(sink) {
		t.Run(proto, func(t *testing.T) {
			sink.Reset()
			env := append(append(baseEnv(), callerParent), otelEnv(endpoint, proto)...)
			out, errOut, code := corralWith(t, env, "run", "--timeout", "500ms", "--grace", "200ms", "--",
				"bash", "-c", `trap '' TERM; echo "traceparent=$TRACEPARENT"; sleep 30`)
			if code != exitTimedOut {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			spans, ok := sink.Wait(10*time.Second, func(s []otlpsink.Span) bool { return len(s) >= 2 })
			runs, tds := otlpsink.Named(spans, "proc.run"), otlpsink.Named(spans, "proc.teardown")
			if !ok || len(runs) != 1 || len(tds) != 1 {
				t.Fatalf("spans %+v\nstderr %s", spans, errOut)
			}
			run, td := runs[0], tds[0]
			if run.TraceID != callerTrace || run.ParentID != callerSpan || td.ParentID != run.SpanID {
				t.Errorf("parentage: run %s under %s, teardown under %s", run.TraceID, run.ParentID, td.ParentID)
			}
			m := seenTraceparent.FindStringSubmatch(out)
			if m == nil || m[1] != callerTrace || m[2] != run.SpanID {
				t.Errorf("the command saw %q; want its run's span %s in trace %s", out, run.SpanID, callerTrace)
			}
			if td.Attrs["corral.sigkill"] != true || td.Attrs["corral.signal"] != "SIGTERM" || run.Attrs["corral.timed_out"] != true || run.Status != "Error" {
				t.Errorf("run %v teardown %v", run.Attrs, td.Attrs)
			}
			if run.Resource["service.name"] != "corral" || run.Resource["process.command"] != "corral run" {
				t.Errorf("resource %v", run.Resource)
			}
		})
	}
}

// TestOTLPRunExportsItsSpanWhenSIGTERMed: SIGTERM before anything was
// exported loses nothing: the run's span, cancelled, arrives.
func TestOTLPRunExportsItsSpanWhenSIGTERMed(t *testing.T) {
	withExporter(t)
	sink := otlpsink.Start(t)
	tag := testutil.Tag(t)
	cmd := exec.Command(corralBin, "run", "--", "bash", "-c", "echo started; sleep 30")
	cmd.Env = append(append(baseEnv(), testutil.TagEnvVar(tag)), otelEnv(sink.HTTP, "http")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "started\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("read %q", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("corral run: %v, want exit 143", err)
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	spans, ok := sink.Wait(10*time.Second, func(s []otlpsink.Span) bool { return len(otlpsink.Named(s, "proc.run")) == 1 })
	if !ok {
		t.Fatalf("the run's span did not arrive: %+v", spans)
	}
	if r := otlpsink.Named(spans, "proc.run")[0]; r.Attrs["corral.cancelled"] != true {
		t.Errorf("run %v", r.Attrs)
	}
}

// TestOTLPFlushAtExitIsBoundedWhenTheCollectorHangs: a collector that
// accepts and never answers costs --otel-flush-timeout at exit, and corral
// says the spans were not exported.
func TestOTLPFlushAtExitIsBoundedWhenTheCollectorHangs(t *testing.T) {
	withExporter(t)
	addr := hangingListener(t)
	began := time.Now()
	_, errOut, code := corralWith(t, append(baseEnv(), otelEnv("http://"+addr, "http")...), "run", "--otel-flush-timeout", "1s", "--", "true")
	took := time.Since(began)
	if code != 0 || took > 5*time.Second || !strings.Contains(errOut, "telemetry") {
		t.Errorf("exit %d after %v, stderr %q", code, took, errOut)
	}
}

// hangingListener accepts connections and never answers.
func hangingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
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
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestOTLPHeadlessTurnIsOneTraceWithTheAgentInIt: a headless turn of the
// real Claude Code against the fake model, under the caller's
// TRACEPARENT: invoke_agent with the GenAI attributes, its Bash call, the
// agent's process and the teardown below it, all in the caller's trace;
// and the agent's own command saw TRACEPARENT in that trace.
func TestOTLPHeadlessTurnIsOneTraceWithTheAgentInIt(t *testing.T) {
	withExporter(t)
	sink := otlpsink.Start(t)
	srv := testutil.FakeModel(t, "traceparent", fakemodel.Options{})
	a := testutil.Claude(t, srv, "Run the command.")
	env := append(append(a.Env, callerParent), otelEnv(sink.GRPC, "grpc")...)
	out, errOut, code := corralWith(t, env, append([]string{"headless", "--json", "--timeout", "2m", "--"}, a.Args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := decodeHeadless(t, out)
	spans, ok := sink.Wait(20*time.Second, func(s []otlpsink.Span) bool { return len(otlpsink.Named(s, "headless.teardown")) == 1 })
	if !ok {
		t.Fatalf("spans %+v", spans)
	}
	turn := only(t, spans, "invoke_agent claude")
	tool := only(t, spans, "execute_tool Bash")
	run := only(t, spans, "proc.run")
	td := only(t, spans, "headless.teardown")
	for _, s := range spans {
		if s.TraceID != callerTrace {
			t.Errorf("span %s in trace %s, not the caller's", s.Name, s.TraceID)
		}
	}
	if turn.ParentID != callerSpan {
		t.Errorf("the turn's parent is %s, want the caller's %s", turn.ParentID, callerSpan)
	}
	for _, s := range []otlpsink.Span{tool, run, td} {
		if s.ParentID != turn.SpanID {
			t.Errorf("%s is not a child of the turn", s.Name)
		}
	}
	if turn.Attrs["gen_ai.system"] != "anthropic" || turn.Attrs["gen_ai.request.model"] == nil || turn.Attrs["gen_ai.usage.output_tokens"] == nil || turn.Attrs["gen_ai.operation.name"] != "invoke_agent" {
		t.Errorf("turn %v", turn.Attrs)
	}
	if tool.Attrs["gen_ai.tool.name"] != "Bash" || tool.Start.Before(turn.Start) || tool.End.After(turn.End) {
		t.Errorf("tool %+v within turn %v–%v", tool, turn.Start, turn.End)
	}
	m := seenTraceparent.FindStringSubmatch(r.Result)
	if m == nil || m[1] != callerTrace || m[2] != run.SpanID {
		t.Errorf("the agent's command saw no TRACEPARENT naming the agent's process span %s in the caller's trace: %q", run.SpanID, r.Result)
	}
	if strings.Contains(strings.Join(attrValues(spans), "\n"), "Run the command.") {
		t.Error("the prompt was recorded without --otel-content")
	}
}

// TestOTLPMCPToolCallsAreSpans: corral mcp over stdio exports a server
// span per tool call, the shell command and its process below it, the
// command seeing TRACEPARENT; over both protocols.
func TestOTLPMCPToolCallsAreSpans(t *testing.T) {
	withExporter(t)
	sink := otlpsink.Start(t)
	for proto, endpoint := range protocols(sink) {
		t.Run(proto, func(t *testing.T) {
			sink.Reset()
			tag := testutil.Tag(t)
			cmd := exec.Command(corralBin, "mcp", "--workdir", t.TempDir(), "--probe-tools", "")
			cmd.Env = append(append(append(baseEnv(), testutil.TagEnvVar(tag)), callerParent), otelEnv(endpoint, proto)...)
			cmd.Stderr = os.Stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "otlp-test", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": `echo "traceparent=$TRACEPARENT"`}})
			if err != nil || res.IsError {
				t.Fatalf("%+v %v", res, err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			cs.Close()
			testutil.AssertNoTagged(t, tag, 10*time.Second)
			spans, ok := sink.Wait(10*time.Second, func(s []otlpsink.Span) bool { return len(otlpsink.Named(s, "tools/call run_command")) == 1 })
			if !ok {
				t.Fatalf("spans %+v", spans)
			}
			call, sc := only(t, spans, "tools/call run_command"), only(t, spans, "shell.command")
			if call.ParentID != callerSpan || call.TraceID != callerTrace || sc.ParentID != call.SpanID || call.Kind != "Server" {
				t.Errorf("call %+v command %+v", call, sc)
			}
			var mine []otlpsink.Span
			for _, r := range otlpsink.Named(spans, "proc.run") {
				if r.ParentID == sc.SpanID {
					mine = append(mine, r)
				}
			}
			m := seenTraceparent.FindStringSubmatch(text)
			if len(mine) != 1 || m == nil || m[2] != mine[0].SpanID {
				t.Errorf("the command's run %+v; it saw %q", mine, text)
			}
		})
	}
}

// TestTelemetryOffStartsNothing: without an endpoint corral never starts
// its exporter (here a script that would leave a mark), nor reads the
// caller's TRACEPARENT into its runs; with one, it does.
func TestTelemetryOffStartsNothing(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	script := filepath.Join(dir, "exporter")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+mark+"\nexec cat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(), "CORRAL_OTLP_EXPORTER="+script, callerParent)
	out, _, code := corralWith(t, env, "run", "--env", "clean", "--", "/bin/sh", "-c", `echo "tp=${TRACEPARENT-none}"`)
	if code != 0 || strings.TrimSpace(out) != "tp=none" {
		t.Errorf("exit %d, the command saw %q", code, out)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the exporter was started with telemetry off")
	}
	corralWith(t, append(env, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9"), "run", "--", "true")
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("with telemetry on the exporter was not started: %v", err)
	}
}

// TestCorralLinksNoTelemetrySDK: the corral binary links the
// OpenTelemetry API only: no SDK, no exporter, no protobuf, no gRPC, so a
// start with telemetry off initialises none of them; and a start runs
// none of their package initialisers.
func TestCorralLinksNoTelemetrySDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	heavy := regexp.MustCompile(`(?m)^(google\.golang\.org/(grpc|protobuf|genproto)|go\.opentelemetry\.io/(otel/sdk|otel/exporters|proto|collector)|github\.com/grpc-ecosystem)(/|$)`)
	if m := heavy.FindAllString(string(out), -1); len(m) > 0 {
		t.Errorf("corral links %v", m)
	}
	cmd := exec.Command(corralBin, "run", "--", "/bin/true")
	cmd.Env = append(baseEnv(), "GODEBUG=inittrace=1")
	trace, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, trace)
	}
	for _, line := range strings.Split(string(trace), "\n") {
		if strings.HasPrefix(line, "init ") && heavy.MatchString(strings.Fields(line)[1]) {
			t.Errorf("initialised at start: %s", line)
		}
	}
}

func only(t *testing.T, spans []otlpsink.Span, name string) otlpsink.Span {
	t.Helper()
	got := otlpsink.Named(spans, name)
	if len(got) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d %q spans among %v", len(got), name, names)
	}
	return got[0]
}

func attrValues(spans []otlpsink.Span) []string {
	var out []string
	for _, s := range spans {
		for _, v := range s.Attrs {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
	}
	return out
}

// TestOTLPPassEnvGivesTheCommandTheOTELVariablesAsked: --otel-pass-env
// passes the OTEL_* variables it names, with corral's values (a flag's
// included), even under --env clean; no other.
func TestOTLPPassEnvGivesTheCommandTheOTELVariablesAsked(t *testing.T) {
	withExporter(t)
	sink := otlpsink.Start(t)
	env := append(baseEnv(), "OTEL_SERVICE_NAME=from-env", "OTEL_RESOURCE_ATTRIBUTES=team=x")
	out, errOut, code := corralWith(t, env, "run", "--env", "clean", "--otel-endpoint", sink.HTTP, "--otel-service-name", "from-flag",
		"--otel-pass-env", "OTEL_EXPORTER_OTLP_*", "--otel-pass-env", "OTEL_SERVICE_NAME", "--",
		"/bin/sh", "-c", `echo "$OTEL_EXPORTER_OTLP_ENDPOINT|$OTEL_SERVICE_NAME|${OTEL_RESOURCE_ATTRIBUTES-unset}"`)
	if want := sink.HTTP + "|from-flag|unset"; code != 0 || strings.TrimSpace(out) != want {
		t.Errorf("exit %d, the command saw %q, want %q\n%s", code, out, want, errOut)
	}
}
