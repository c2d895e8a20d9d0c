package mcpserver

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/corralrun/corral/internal/spantest"
	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/shell"
)

// inProcess serves srv over pipes in this process, with ctx as the
// server's context, and connects the SDK's client to it.
func inProcess(t *testing.T, ctx context.Context, srv *Server) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "trace-test", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-served
	})
	return cs
}

// TestToolCallIsAServerSpanAboveItsCommand: run_command is a server span
// "tools/call run_command" under the server's trace (or under the
// traceparent the client put in the request's _meta); the shell command
// and its process are below it, and the command sees TRACEPARENT.
func TestToolCallIsAServerSpanAboveItsCommand(t *testing.T) {
	tag := testutil.Tag(t)
	tool := &shell.Tool{Dir: t.TempDir(), SpillDir: t.TempDir(), Env: []string{testutil.TagEnvVar(tag)}, ProbeTools: []string{}}
	defer tool.Close()
	srv, err := New(Config{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	ctx, tr := spantest.Start(t)
	cs := inProcess(t, ctx, srv)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": `echo "tp=$TRACEPARENT"`}})
	if err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	spans := tr.Wait(5*time.Second, func(s []tracetest.SpanStub) bool { return len(spantest.Named(s, "tools/call run_command")) == 1 })
	call, cmd := only(t, spans, "tools/call run_command"), only(t, spans, "shell.command")
	// The session's first shell (which captures its initial state) runs
	// under the call too; the command's own run is under the command.
	var run tracetest.SpanStub
	for _, s := range spantest.Named(spans, "proc.run") {
		if s.Parent.SpanID() == cmd.SpanContext.SpanID() {
			run = s
		} else if s.Parent.SpanID() != call.SpanContext.SpanID() {
			t.Errorf("a proc.run outside the call: %+v", s)
		}
	}
	if call.Parent.SpanID() != tr.Parent.SpanID() || cmd.Parent.SpanID() != call.SpanContext.SpanID() || !run.SpanContext.IsValid() {
		t.Errorf("parentage: call under %v, command under %v, run %v", call.Parent.SpanID(), cmd.Parent.SpanID(), run.SpanContext.SpanID())
	}
	if call.SpanKind.String() != "server" || spantest.Attr(call, "gen_ai.tool.name") != "run_command" || spantest.Attr(call, "gen_ai.tool.call.arguments") != nil {
		t.Errorf("call span %v %v", call.SpanKind, call.Attributes)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "tp=00-"+run.SpanContext.TraceID().String()+"-"+run.SpanContext.SpanID().String()+"-01") {
		t.Errorf("the command did not see its run's trace context: %s", text)
	}

	// A client's own trace context, in _meta, wins.
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "exit 2"},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-00f067aa0ba902b7-01"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []tracetest.SpanStub
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && len(got) == 0 {
		got = spantest.Named(spantest.All(), "tools/call run_command")
		got = byTrace(got, clientTrace)
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 1 || got[0].Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("the call under the client's trace: %+v", got)
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
}

func only(t *testing.T, spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	t.Helper()
	got := spantest.Named(spans, name)
	if len(got) != 1 {
		t.Fatalf("%d %s spans among %d", len(got), name, len(spans))
	}
	return got[0]
}

func byTrace(spans []tracetest.SpanStub, id string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanContext.TraceID().String() == id {
			out = append(out, s)
		}
	}
	return out
}
