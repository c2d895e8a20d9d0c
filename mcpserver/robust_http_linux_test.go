package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/shell"
)

// httpServer serves a Server over httptest, its commands tagged, and
// proves at the end that nothing of them is left.
func httpServer(t *testing.T, o HTTPOptions) (*Server, *httptest.Server, string) {
	t.Helper()
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	tool := &shell.Tool{Env: []string{testutil.TagEnvVar(tag)}, Dir: t.TempDir(), SpillDir: t.TempDir()}
	srv, err := New(Config{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(o))
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		hs.Close()
		tool.Close()
		testutil.AssertNoTagged(t, tag, 10*time.Second)
	})
	return srv, hs, tag
}

// rawHTTP is a client of the streamable HTTP transport that sends what
// it is told.
type rawHTTP struct {
	t     *testing.T
	url   string
	sid   string
	token string
}

// post sends body with the session id (if any) and extra headers, and
// returns the status and the JSON-RPC messages of the answer (a JSON body
// or an event stream).
func (h *rawHTTP) post(ctx context.Context, body string, hdr ...string) (int, []reply) {
	h.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.sid != "" {
		req.Header.Set("Mcp-Session-Id", h.sid)
	}
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		h.sid = sid
	}
	b, _ := io.ReadAll(resp.Body)
	var msgs []reply
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, l := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				var m reply
				if json.Unmarshal([]byte(d), &m) == nil {
					msgs = append(msgs, m)
				}
			}
		}
	} else if len(b) > 0 {
		var m reply
		if err := json.Unmarshal(b, &m); err != nil {
			h.t.Fatalf("status %d with a body that is not JSON-RPC: %q", resp.StatusCode, b)
		}
		msgs = append(msgs, m)
	}
	return resp.StatusCode, msgs
}

func (h *rawHTTP) initialize() {
	h.t.Helper()
	code, msgs := h.post(context.Background(), `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil || h.sid == "" {
		h.t.Fatalf("initialize: %d %+v", code, msgs)
	}
	h.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Protocol-Version", "2025-06-18")
}

func (h *rawHTTP) ping(id int) {
	h.t.Helper()
	code, msgs := h.post(context.Background(), ping(id))
	if code != http.StatusOK || len(msgs) != 1 || msgs[0].Error != nil {
		h.t.Fatalf("ping: %d %+v", code, msgs)
	}
}

func TestHTTPMalformedBodiesGetJSONRPCErrorsAndTheSessionGoesOn(t *testing.T) {
	_, hs, _ := httpServer(t, HTTPOptions{})
	h := &rawHTTP{t: t, url: hs.URL}
	if code, msgs := h.post(context.Background(), ping(1)); code != http.StatusBadRequest || len(msgs) != 1 || msgs[0].Error.Code != -32600 {
		t.Fatalf("a request without a session id: %d %+v", code, msgs)
	}
	h.initialize()
	for i, c := range malformedLines {
		code, msgs := h.post(context.Background(), c.line)
		if len(msgs) != 1 || msgs[0].Error == nil || msgs[0].Error.Code != c.code {
			t.Errorf("%s: %d %+v, want code %d", c.name, code, msgs, c.code)
		}
		if c.code == -32700 || c.code == -32600 {
			if code != http.StatusBadRequest {
				t.Errorf("%s: status %d", c.name, code)
			}
		}
		h.ping(100 + i)
	}
	code, msgs := h.post(context.Background(), `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"`+strings.Repeat("x", MaxMessageBytes)+`"}}`)
	if code != http.StatusRequestEntityTooLarge || len(msgs) != 1 || !strings.Contains(msgs[0].Error.Message, "8 MiB") {
		t.Errorf("an over-long body: %d %+v", code, msgs)
	}
	h.ping(4)
	req, _ := http.NewRequest(http.MethodGet, hs.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET without a session id: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// Origin was not validated (MCP says servers MUST), and "bearer" in lower
// case was refused.
func TestHTTPChecksTheOriginAndTakesTheBearerSchemeInAnyCase(t *testing.T) {
	_, hs, _ := httpServer(t, HTTPOptions{Token: "s3cret", AllowOrigins: []string{"https://app.example.com/"}})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	for origin, want := range map[string]int{
		"https://evil.example":       http.StatusForbidden,
		"null":                       http.StatusForbidden,
		"http://localhost.evil.test": http.StatusForbidden,
		"https://app.example.com:8":  http.StatusForbidden,
		"":                           http.StatusOK,
		"http://localhost:5173":      http.StatusOK,
		"http://127.0.0.1:3000":      http.StatusOK,
		"http://[::1]:3000":          http.StatusOK,
		"https://app.example.com":    http.StatusOK,
		"HTTPS://APP.EXAMPLE.COM":    http.StatusOK,
	} {
		h := &rawHTTP{t: t, url: hs.URL, token: "s3cret"}
		var hdr []string
		if origin != "" {
			hdr = []string{"Origin", origin}
		}
		if code, msgs := h.post(context.Background(), init, hdr...); code != want || len(msgs) != 1 {
			t.Errorf("origin %q: %d %+v, want %d", origin, code, msgs, want)
		}
	}
	for auth, want := range map[string]int{"bearer s3cret": 200, "BEARER  s3cret ": 200, "Bearer wrong": 401, "s3cret": 401, "Basic s3cret": 401} {
		h := &rawHTTP{t: t, url: hs.URL}
		if code, _ := h.post(context.Background(), init, "Authorization", auth); code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, code, want)
		}
	}
}

// A result was sent for a call the client had cancelled.
func TestHTTPCancelledCallGetsNoResponseAndItsCommandStops(t *testing.T) {
	_, hs, tag := httpServer(t, HTTPOptions{})
	h := &rawHTTP{t: t, url: hs.URL}
	h.initialize()
	got := make(chan []reply, 1)
	go func() {
		_, msgs := h.post(context.Background(), callLine(7, "run_command", map[string]any{"command": "sleep 300"}))
		got <- msgs
	}()
	testutil.WaitFor(t, 10*time.Second, "the command running", func() bool { return len(testutil.Tagged(tag)) > 0 })
	if code, _ := h.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); code != http.StatusAccepted {
		t.Fatalf("cancel: %d", code)
	}
	select {
	case msgs := <-got:
		for _, m := range msgs {
			if string(m.ID) == "7" {
				t.Errorf("a response to the cancelled call: %+v", m)
			}
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the cancelled call's stream did not end")
	}
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	h.ping(8)
}

// postInOrder posts n run_command calls to a fresh session, each once the
// one before has arrived, the first sleeping for first, each other one
// appending its number to a file; it returns the file once all are
// answered.
func postInOrder(t *testing.T, n int, first string) string {
	srv, hs, _ := httpServer(t, HTTPOptions{})
	h := &rawHTTP{t: t, url: hs.URL}
	h.initialize()
	l := srv.links.get(httpLink(h.sid))
	arrived := func() uint64 {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.seq
	}
	out := t.TempDir() + "/order"
	var wg sync.WaitGroup
	for i := range n {
		cmd := fmt.Sprintf("echo %d >> %s", i, out)
		if i == 0 {
			cmd = first + "; " + cmd
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.post(context.Background(), callLine(i, "run_command", map[string]any{"command": cmd}))
		}()
		testutil.WaitFor(t, 10*time.Second, "the call received", func() bool { return arrived() == uint64(i+1) })
	}
	wg.Wait()
	return out
}

// numbers is "0\n1\n...n-1\n".
func numbers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// Calls posted one after another run in that order, however the server
// schedules their handlers.
func TestHTTPCallsRunInArrivalOrder(t *testing.T) {
	out := postInOrder(t, 6, "sleep 1")
	if b, _ := os.ReadFile(out); string(b) != numbers(6) {
		t.Errorf("ran in the order %q", b)
	}
}

// Many calls posted one after another while the first runs: they run in
// the order they were posted.
func TestHTTPManyQueuedCallsRunInArrivalOrder(t *testing.T) {
	out := postInOrder(t, 25, "sleep 2")
	if b, _ := os.ReadFile(out); string(b) != numbers(25) {
		t.Errorf("ran in the order %q", b)
	}
}

// The TypeScript SDK's client.close() and the Inspector close their event
// stream and never send DELETE: their sessions, and the jobs in them, ran
// until --idle (30 minutes).
func TestHTTPReapsTheSessionOfAClientThatIsGone(t *testing.T) {
	_, hs, tag := httpServer(t, HTTPOptions{ClientIdle: 500 * time.Millisecond})
	stays := &rawHTTP{t: t, url: hs.URL} // never holds a stream: only Idle ends it
	stays.initialize()
	stays.post(context.Background(), callLine(1, "run_command", map[string]any{"command": "true"}))

	h := &rawHTTP{t: t, url: hs.URL}
	h.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hs.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", h.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	go io.Copy(io.Discard, resp.Body)
	if _, msgs := h.post(context.Background(), callLine(2, "run_command", map[string]any{"command": "sleep 300", "background": true})); len(msgs) != 1 || msgs[0].Error != nil {
		t.Fatalf("job: %+v", msgs)
	}
	testutil.WaitFor(t, 10*time.Second, "the job running", func() bool { return len(testutil.Tagged(tag)) > 0 })
	time.Sleep(time.Second) // an open stream keeps the session, however long
	if len(testutil.Tagged(tag)) == 0 {
		t.Fatal("the session of a connected client was reaped")
	}
	cancel() // the client vanishes
	resp.Body.Close()
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	if code, _ := h.post(context.Background(), ping(3)); code != http.StatusNotFound {
		t.Errorf("the reaped session still answers: %d", code)
	}
	stays.ping(4)
}

// corral mcp --http ignored SIGTERM while a session that ran a tool was
// open, until --idle expired; the sessions' jobs and files outlived it.
func TestHTTPSIGTERMExitsWithinTheGraceLeavingNothing(t *testing.T) {
	tag := testutil.Tag(t)
	tmp := t.TempDir()
	cmd := exec.Command(corralBin, "mcp", "--http", "127.0.0.1:0", "--workdir", t.TempDir(), "--setenv", testutil.TagEnvVar(tag))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if _, u, ok := strings.Cut(sc.Text(), "serving streamable HTTP at "); ok {
			url = u
			break
		}
	}
	go func() { io.Copy(os.Stderr, stderr); exited <- cmd.Wait() }()
	if url == "" {
		t.Fatal("no address")
	}
	commands := func() int {
		n := 0
		for _, st := range testutil.Tagged(tag) {
			if st.Pid != cmd.Process.Pid {
				n++
			}
		}
		return n
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var r runResult
	call(t, cs, "run_command", map[string]any{"command": "sleep 300", "background": true}, &r)
	results := make(chan *mcp.CallToolResult, 1)
	mark := t.TempDir() + "/state-dir"
	go func() {
		res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo $__corral_d > " + mark + "; sleep 300"}})
		results <- res
	}()
	var state []byte
	testutil.WaitFor(t, 10*time.Second, "the command running", func() bool {
		state, _ = os.ReadFile(mark)
		return len(state) > 0 && commands() >= 3
	})
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("corral mcp --http did not exit after SIGTERM")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("shutdown took %v (grace 2 s)", d)
	}
	select {
	case res := <-results:
		if res == nil || !res.IsError || !strings.Contains(textOf(res), "shutting down") {
			t.Errorf("the call in flight: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Error("the call in flight was never answered")
	}
	testutil.AssertNoTagged(t, tag, 5*time.Second)
	if _, err := os.Stat(strings.TrimSpace(string(state))); !os.IsNotExist(err) {
		t.Errorf("the session's state directory %s is still there: %v", state, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("files left in TMPDIR: %v", left)
	}
}
