package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/internal/testutil"
	"github.com/corralrun/corral/shell"
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func TestHTTPServerGivesEachClientItsOwnSessionAndChecksTheToken(t *testing.T) {
	testutil.CheckFDs(t)
	tag := testutil.Tag(t)
	tool := &shell.Tool{Env: []string{testutil.TagEnvVar(tag)}, Dir: t.TempDir()}
	srv, err := New(Config{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler(HTTPOptions{Token: "s3cret", Idle: time.Minute}))
	defer func() {
		hs.Close()
		srv.Close()
		tool.Close()
		testutil.AssertNoTagged(t, tag, 5*time.Second)
	}()

	// No token: refused before MCP.
	resp, err := http.Post(hs.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d without a token", resp.StatusCode)
	}

	connect := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}
		cs, err := c.Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a, b := connect(), connect()
	var r runResult
	call(t, a, "run_command", map[string]any{"command": "cd /; export WHO=a"}, &r)
	call(t, b, "run_command", map[string]any{"command": "pwd; echo ${WHO-none}"}, &r)
	if r.Stdout != tool.Dir+"\nnone\n" {
		t.Errorf("client b sees client a's state: %q", r.Stdout)
	}
	call(t, a, "run_command", map[string]any{"command": "pwd; echo $WHO"}, &r)
	if r.Stdout != "/\na\n" {
		t.Errorf("client a lost its state: %q", r.Stdout)
	}
	call(t, a, "run_command", map[string]any{"command": "sleep 300", "background": true}, &r)
	testutil.WaitFor(t, 5*time.Second, "job running", func() bool { return len(testutil.Tagged(tag)) >= 1 })
	a.Close() // ends client a's session, and its job with it
	testutil.AssertNoTagged(t, tag, 10*time.Second)
	b.Close()
}

func TestCheckListenRequiresATokenAwayFromLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:8765": true, "localhost:1": true, "[::1]:2": true, "0.0.0.0:8765": false, ":8765": false, "10.1.2.3:80": false} {
		if err := CheckListen(addr, ""); (err == nil) != ok {
			t.Errorf("%s without a token: %v", addr, err)
		}
		if err := CheckListen(addr, "t"); err != nil {
			t.Errorf("%s with a token: %v", addr, err)
		}
	}
	if err := CheckListen("nonsense", ""); err == nil {
		t.Error("bad address accepted")
	}
}
