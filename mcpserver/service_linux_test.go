package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/servetest"
	"github.com/corralrun/corral/internal/testutil"
)

// These tests run the service's tools against a real corral serve (the
// binary TestMain built), on a free loopback port with its own data
// directory, through the SDK's own client over both transports.

// service is a corral serve and an MCP server of its tools.
type service struct {
	t       *testing.T
	api     *client.Client // the test's own client of the service
	srv     *Server
	streams *streamCount // the MCP server's event streams to the service
	tag     string
}

// streamCount counts the event streams the MCP server holds open to the
// service: how a test sees that a wait stopped following a run.
type streamCount struct {
	base http.RoundTripper
	open atomic.Int64
}

func (c *streamCount) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || r.Header.Get("Accept") != "text/event-stream" {
		return resp, err
	}
	c.open.Add(1)
	resp.Body = &countedBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

type countedBody struct {
	io.ReadCloser
	c    *streamCount
	once sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.c.open.Add(-1) })
	return b.ReadCloser.Close()
}

// startService starts corral serve and an MCP server of its tools, with
// progress every 100 ms.
func startService(t *testing.T) *service {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	ss := servetest.Start(t, corralBin, servetest.Options{Data: t.TempDir(), Tag: tag})
	streams := &streamCount{base: &http.Transport{}}
	mc := client.New(ss.Addr, ss.Token)
	mc.HTTP = &http.Client{Transport: streams}
	srv, err := New(Config{Service: &Service{Client: mc, ProgressEvery: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := &service{t: t, api: client.New(ss.Addr, ss.Token), srv: srv, streams: streams, tag: tag}
	t.Cleanup(func() {
		// Cancel whatever a test left running (which ends the waits on
		// it), then check its trees gone.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		list, _, _ := s.api.Executions(ctx, client.ListOptions{Statuses: []corral.Status{corral.StatusRunning, corral.StatusQueued, corral.StatusWaiting}})
		for _, e := range list {
			s.api.Cancel(ctx, e.ID)
		}
		srv.Shutdown(ctx)
		ss.Stop()
		testutil.AssertNoTagged(t, tag, 10*time.Second)
		streams.base.(*http.Transport).CloseIdleConnections()
	})
	return s
}

// cancel cancels execution id through the service's API.
func (s *service) cancel(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.api.Cancel(ctx, id)
}

// agent creates a shell agent.
func (s *service) agent(a corral.Agent) {
	s.t.Helper()
	a.Kind = corral.KindShell
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.api.CreateAgent(ctx, &a); err != nil {
		s.t.Fatal(err)
	}
}

// connect connects an SDK client over stdio ("stdio") or streamable HTTP
// ("http"); opts may handle progress.
func (s *service) connect(transport string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t := s.t
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tr mcp.Transport
	switch transport {
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() { served <- s.srv.ServeStdio(context.Background(), inR, outW); outW.Close() }()
		t.Cleanup(func() {
			inW.Close()
			if err := <-served; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		})
		tr = &mcp.IOTransport{Reader: outR, Writer: inW}
	default:
		hs := httptest.NewServer(s.srv.Handler(HTTPOptions{}))
		t.Cleanup(hs.Close)
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hs.Client()}
	}
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and decodes its structured result into out; it
// fails the test on an error result unless wantErr, and returns the
// result's text.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any, wantErr bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError != wantErr {
		t.Fatalf("%s: isError %v, want %v: %s", name, res.IsError, wantErr, text)
	}
	if out != nil && !wantErr {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
	}
	return text
}

// eventually waits for cond, within a deadline generous for a loaded
// machine.
func eventually(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// flakyTask fails the first time it runs (exit 3) and succeeds the
// second, through a marker file.
func flakyTask(t *testing.T) string {
	m := filepath.Join(t.TempDir(), "ran-once")
	return fmt.Sprintf(`if [ -e %[1]s ]; then echo second; else touch %[1]s; echo first; exit 3; fi`, m)
}

func TestServiceWaitFollowsTheRunThroughItsAttempts(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "flaky", Retry: corral.Retry{MaxAttempts: 2, RetryOn: []corral.ErrorType{corral.ErrorExit}, RetryBackoff: corral.Duration(200 * time.Millisecond)}})
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			cs := s.connect(tr, nil)
			var sub ExecutionView
			callTool(t, cs, "submit_task", map[string]any{"agent": "flaky", "input": flakyTask(t)}, &sub, false)
			if sub.ID == "" || sub.Attempt != 1 || sub.MaxAttempts != 2 {
				t.Fatalf("submitted %+v", sub)
			}
			var w WaitResult
			callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID, "timeout_ms": 120000}, &w, false)
			if w.Status != "succeeded" || !w.Finished || w.TimedOut || w.Attempt != 2 || w.ID == sub.ID || w.RetryOf != sub.ID || w.Stdout != "second\n" {
				t.Fatalf("the wait did not follow the run to its second attempt: %+v", w)
			}
			if len(w.Attempts) != 2 || w.Attempts[0].ID != sub.ID || w.Attempts[0].Status != "failed" || w.Attempts[0].ErrorType != "exit" || w.Attempts[1].ID != w.ID {
				t.Errorf("attempts %+v", w.Attempts)
			}
			// The first attempt, as it stands, names its retry.
			var first ExecutionView
			callTool(t, cs, "get_execution", map[string]any{"id": sub.ID}, &first, false)
			if first.Status != "failed" || first.RetriedBy != w.ID || first.Finished || len(first.Notes) == 0 {
				t.Errorf("first attempt %+v", first)
			}
			// A wait given the first attempt's id of a finished run goes
			// straight to its end.
			var again WaitResult
			callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID}, &again, false)
			if again.ID != w.ID || again.Status != "succeeded" {
				t.Errorf("second wait %+v", again)
			}
		})
	}
}

func TestServiceWaitEndsWhenTheClientCancels(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "sleeper", MaxParallelTasks: 4})
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			cs := s.connect(tr, nil)
			var sub ExecutionView
			callTool(t, cs, "submit_task", map[string]any{"agent": "sleeper", "input": "sleep 300"}, &sub, false)
			// A wait the cancel did not end (the bug this test is for)
			// ends with the run, before the connection's cleanup waits
			// for its calls.
			t.Cleanup(func() { s.cancel(sub.ID) })
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_execution", Arguments: map[string]any{"id": sub.ID, "timeout_ms": 600000}})
				done <- err
			}()
			eventually(t, "the wait opens its event stream", 30*time.Second, func() bool { return s.streams.open.Load() == 1 })
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the cancelled call returned a result")
			}
			// The wait stops following the run: its stream to the service
			// is closed, long before the run or the wait's timeout end.
			eventually(t, "the cancelled wait closes its stream", 10*time.Second, func() bool { return s.streams.open.Load() == 0 })
			var c ExecutionView
			callTool(t, cs, "cancel_execution", map[string]any{"id": sub.ID}, &c, false)
			var w WaitResult
			callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID, "timeout_ms": 60000}, &w, false)
			if w.Status != "cancelled" || !w.Finished {
				t.Errorf("after cancel_execution: %+v", w)
			}
		})
	}
}

func TestServiceWaitSendsProgressAndTimesOut(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "sleeper"})
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			var mu sync.Mutex
			var got []*mcp.ProgressNotificationParams
			cs := s.connect(tr, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, r.Params)
				mu.Unlock()
			}})
			var sub ExecutionView
			callTool(t, cs, "submit_task", map[string]any{"agent": "sleeper", "input": "sleep 300"}, &sub, false)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := &mcp.CallToolParams{Name: "wait_execution", Arguments: map[string]any{"id": sub.ID, "timeout_ms": 1500}}
			p.SetProgressToken("wait-1")
			res, err := cs.CallTool(ctx, p)
			if err != nil || res.IsError {
				t.Fatalf("wait: %v %+v", err, res)
			}
			var w WaitResult
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &w)
			if !w.TimedOut || w.Finished || w.Status != "running" || w.ID != sub.ID || w.WaitedMS < 1400 || len(w.Notes) == 0 || !strings.Contains(w.Notes[0], "wait_execution again") {
				t.Errorf("timed-out wait %+v", w)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) < 3 {
				t.Fatalf("%d progress notifications in 1.5 s (every 100 ms wanted)", len(got))
			}
			for i, n := range got {
				if n.ProgressToken != "wait-1" || (i > 0 && n.Progress <= got[i-1].Progress) || !strings.Contains(n.Message, sub.ID) {
					t.Errorf("notification %d: %+v", i, n)
				}
			}
			callTool(t, cs, "cancel_execution", map[string]any{"id": sub.ID}, nil, false)
		})
	}
}

func TestServiceToolsBoundTheirOutput(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "chatty", MaxOutput: 1 << 20})
	cs := s.connect("stdio", nil)
	var sub ExecutionView
	// 2,000 lines of 100 characters, with a terminal escape in each.
	callTool(t, cs, "submit_task", map[string]any{"agent": "chatty", "input": `for i in $(seq 2000); do printf '\033[1m%04d\033[0m%096d\n' $i 0; done`}, &sub, false)
	var w WaitResult
	callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID, "timeout_ms": 120000, "max_output_chars": 1000}, &w, false)
	if w.Status != "succeeded" || !w.Truncated || len([]rune(w.Stdout)) > 1100 || strings.ContainsRune(w.Stdout, '\x1b') {
		t.Fatalf("stdout not bounded or not clean: %d chars, %+v", len(w.Stdout), w.Truncated)
	}
	if !strings.HasPrefix(w.Stdout, "0001") || !strings.HasSuffix(w.Stdout, strings.Repeat("0", 96)+"\n") || !strings.Contains(w.Stdout, "characters omitted") {
		t.Errorf("head and tail not kept: %q", w.Stdout)
	}
	var g ExecutionView
	callTool(t, cs, "get_execution", map[string]any{"id": sub.ID, "max_output_chars": 1e300}, &g, false)
	if len(g.Notes) == 0 || !strings.Contains(g.Notes[0], "above the maximum; 500000 was used") || g.Truncated {
		t.Errorf("the cap: %v truncated %v", g.Notes, g.Truncated)
	}
	var l LogsResult
	callTool(t, cs, "execution_logs", map[string]any{"id": sub.ID, "tail": 5}, &l, false)
	if len(l.Records) != 5 || l.Omitted == 0 || !l.Finished || l.LastSeq != l.Records[4].Seq || strings.ContainsRune(l.Records[0].Text, '\x1b') {
		t.Fatalf("tail: %+v", l)
	}
	var next LogsResult
	callTool(t, cs, "execution_logs", map[string]any{"id": sub.ID, "after": l.LastSeq}, &next, false)
	if len(next.Records) != 0 || next.LastSeq != l.LastSeq {
		t.Errorf("after the last record: %+v", next)
	}
	var small LogsResult
	callTool(t, cs, "execution_logs", map[string]any{"id": sub.ID, "tail": 1000, "max_output_chars": 500}, &small, false)
	n := 0
	for _, r := range small.Records {
		n += len([]rune(r.Text))
	}
	if n > 500 || len(small.Records) == 0 || small.Omitted == 0 {
		t.Errorf("the budget of the tail: %d chars in %d records", n, len(small.Records))
	}
}

func TestServiceToolsAnswerBadInputWithErrorResults(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "one", MaxParallelTasks: 1})
	cs := s.connect("http", nil)
	var agents AgentList
	callTool(t, cs, "list_agents", map[string]any{}, &agents, false)
	if len(agents.Agents) != 1 || agents.Agents[0].Name != "one" || agents.Agents[0].Kind != "shell" || agents.Agents[0].MaxParallelTasks != 1 {
		t.Errorf("agents %+v", agents)
	}
	if msg := callTool(t, cs, "submit_task", map[string]any{"agent": "nobody", "input": "true"}, nil, true); !strings.Contains(msg, "nobody") {
		t.Errorf("unknown agent: %s", msg)
	}
	var sub ExecutionView
	callTool(t, cs, "submit_task", map[string]any{"agent": "one", "input": "sleep 300"}, &sub, false)
	if msg := callTool(t, cs, "submit_task", map[string]any{"agent": "one", "input": "true"}, nil, true); !strings.Contains(msg, "capacity") || !strings.Contains(msg, "not run") {
		t.Errorf("at capacity: %s", msg)
	}
	if msg := callTool(t, cs, "wait_execution", map[string]any{"id": "no-such-id", "timeout_ms": 1000}, nil, true); !strings.Contains(msg, "no execution") {
		t.Errorf("unknown id: %s", msg)
	}
	if msg := callTool(t, cs, "list_executions", map[string]any{"status": "sleeping"}, nil, true); !strings.Contains(msg, "unknown status") {
		t.Errorf("bad status: %s", msg)
	}
	var list ExecutionList
	callTool(t, cs, "list_executions", map[string]any{"agent": "one", "status": "running"}, &list, false)
	if len(list.Executions) != 1 || list.Executions[0].ID != sub.ID || list.Executions[0].Input != "sleep 300" {
		t.Errorf("list %+v", list)
	}
	callTool(t, cs, "cancel_execution", map[string]any{"id": sub.ID}, nil, false)
	var w WaitResult
	callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID}, &w, false)
	if msg := callTool(t, cs, "cancel_execution", map[string]any{"id": sub.ID}, nil, true); !strings.Contains(msg, "already finished") {
		t.Errorf("cancel of a finished run: %s", msg)
	}
	if msg := callTool(t, cs, "wait_execution", map[string]any{"id": sub.ID, "timeout_ms": -1}, nil, true); !strings.Contains(msg, "negative") {
		t.Errorf("negative timeout: %s", msg)
	}
	for _, tool := range []string{"wait_execution", "get_execution", "execution_logs", "cancel_execution"} {
		if msg := callTool(t, cs, tool, map[string]any{"id": " "}, nil, true); !strings.Contains(msg, "id is empty") {
			t.Errorf("%s with an empty id: %s", tool, msg)
		}
	}
	// The schema's types are checked before a tool runs; an id with
	// slashes and dots stays one path segment.
	if msg := callTool(t, cs, "get_execution", map[string]any{"id": "../agents/one"}, nil, true); !strings.Contains(msg, "no execution") {
		t.Errorf("an id with slashes: %s", msg)
	}
	if msg := callTool(t, cs, "submit_task", map[string]any{"agent": "one", "input": 5}, nil, true); msg == "" {
		t.Error("an input of the wrong type was not refused")
	}
}

func TestServiceShutdownAnswersTheWaitInFlight(t *testing.T) {
	s := startService(t)
	s.agent(corral.Agent{Name: "sleeper"})
	cs := s.connect("stdio", nil)
	var sub ExecutionView
	callTool(t, cs, "submit_task", map[string]any{"agent": "sleeper", "input": "sleep 300"}, &sub, false)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_execution", Arguments: map[string]any{"id": sub.ID, "timeout_ms": 600000}})
		done <- res
	}()
	eventually(t, "the wait opens its event stream", 30*time.Second, func() bool { return s.streams.open.Load() == 1 })
	start := time.Now()
	s.srv.Shutdown(context.Background())
	res := <-done
	if res == nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "shutting down") || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "goes on") {
		t.Fatalf("the wait in flight: %+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	if n := s.streams.open.Load(); n != 0 {
		t.Errorf("%d event streams left open", n)
	}
}
