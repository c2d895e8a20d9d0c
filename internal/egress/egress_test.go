package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve starts a proxy allowing allow on a loopback listener and returns it
// with its address; the test's cleanup closes it and checks Serve ended.
func serve(t *testing.T, allow ...string) (*Proxy, string) {
	t.Helper()
	p, err := New(allow)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p, l.Addr().String()
}

// upstream starts an HTTP server that answers with its request's Host.
func upstream(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s", r.Host)
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

// connect sends CONNECT target to the proxy and returns the connection
// and the response status.
func connect(t *testing.T, proxy, target string) (net.Conn, *bufio.Reader, int) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return c, br, resp.StatusCode
}

func client(proxy string) *http.Client {
	u, _ := url.Parse("http://" + proxy)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}, Timeout: 30 * time.Second}
}

func get(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestConnectTunnelsToAllowedHost(t *testing.T) {
	_, addr := upstream(t)
	_, proxy := serve(t, addr)
	c, br, code := connect(t, proxy, addr)
	if code != http.StatusOK {
		t.Fatalf("CONNECT %s: %d, want 200", addr, code)
	}
	// Speak HTTP through the tunnel, with the request sent in the same
	// write as nothing else: the proxy must pass on what it buffered.
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: tunnelled\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello from tunnelled" {
		t.Fatalf("through the tunnel: %q", b)
	}
}

func TestConnectPassesBytesSentWithTheRequest(t *testing.T) {
	_, addr := upstream(t)
	_, proxy := serve(t, addr)
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	// One write: the CONNECT and the tunnelled request together.
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.1\r\nHost: eager\r\nConnection: close\r\n\r\n", addr, addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello from eager" {
		t.Fatalf("through the tunnel: %q", b)
	}
}

func TestPlainHTTPToAllowedHost(t *testing.T) {
	_, addr := upstream(t)
	_, proxy := serve(t, addr)
	if code, body := get(t, client(proxy), "http://"+addr+"/x"); code != 200 || body != "hello from "+addr {
		t.Fatalf("GET through the proxy: %d %q, want 200 %q", code, body, "hello from "+addr)
	}
	// The absolute URI names the host; a Host header naming another must
	// not reach the upstream (a shared front end could route by it).
	conn, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "GET http://%s/x HTTP/1.1\r\nHost: fronted.example\r\nConnection: close\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello from "+addr {
		t.Fatalf("GET with another Host header: %d %q, want 200 %q", resp.StatusCode, b, "hello from "+addr)
	}
}

func TestRefusedHostsGet403AndAreRecordedOnce(t *testing.T) {
	_, addr := upstream(t)
	_, port, _ := net.SplitHostPort(addr)
	p, proxy := serve(t, "allowed.example", "127.0.0.1:1")
	c := client(proxy)
	if code, body := get(t, c, "http://denied.example/"); code != 403 || !strings.Contains(body, "denied.example:80 is not an allowed host") {
		t.Fatalf("GET denied host: %d %q", code, body)
	}
	if _, _, code := connect(t, proxy, "denied.example:443"); code != 403 {
		t.Fatalf("CONNECT denied host: %d", code)
	}
	// The upstream is on an allowed IP but not an allowed port.
	if code, _ := get(t, c, "http://"+addr+"/"); code != 403 {
		t.Fatalf("GET allowed IP, other port: %d", code)
	}
	if code, _ := get(t, c, "http://DENIED.example./again"); code != 403 {
		t.Fatalf("GET denied host again: %d", code)
	}
	want := []string{"denied.example:80", "denied.example:443", "127.0.0.1:" + port}
	if got := p.Denied(); !slices.Equal(got, want) {
		t.Fatalf("Denied() = %q, want %q", got, want)
	}
}

func TestAllowlistMatching(t *testing.T) {
	p, err := New([]string{"api.example.com", "*.cdn.example", "pinned.example:8443", "10.1.2.3", "[::1]:443"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"api.example.com", 443, true},
		{"api.example.com", 80, true},
		{"example.com", 443, false},
		{"evil-api.example.com", 443, false},
		{"api.example.com.evil", 443, false},
		{"a.cdn.example", 443, true},
		{"a.b.cdn.example", 80, true},
		{"cdn.example", 443, false}, // *. is for subdomains only
		{"xcdn.example", 443, false},
		{"pinned.example", 8443, true},
		{"pinned.example", 443, false},
		{"10.1.2.3", 22, true},
		{"10.1.2.4", 22, false},
		{"::1", 443, true},
		{"::1", 80, false},
		{"0:0:0:0:0:0:0:1", 443, true},
	} {
		if got := p.allowed(c.host, c.port); got != c.want {
			t.Errorf("allowed(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

func TestIPLiteralNeedsAnIPEntry(t *testing.T) {
	_, addr := upstream(t)
	_, port, _ := net.SplitHostPort(addr)
	_, proxy := serve(t, "localhost")
	if _, _, code := connect(t, proxy, addr); code != 403 {
		t.Fatalf("CONNECT %s with only localhost allowed: %d, want 403", addr, code)
	}
	// The name is allowed and dialled as asked.
	if _, _, code := connect(t, proxy, "localhost:"+port); code != 200 {
		t.Fatalf("CONNECT localhost:%s: %d, want 200", port, code)
	}
}

func TestBadRequests(t *testing.T) {
	_, proxy := serve(t, "allowed.example")
	for _, c := range []struct {
		name, raw string
		want      int
	}{
		{"origin-form", "GET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"https over plain proxy", "GET https://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"CONNECT without port", "CONNECT allowed.example HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"CONNECT bad host", "CONNECT allowed$example:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"huge header", "GET http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nX: " + strings.Repeat("a", 2*maxHeaderBytes) + "\r\n\r\n", 431},
		{"fragment", "GET http://allowed.example/#x HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"user information", "GET http://u@allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"HTTP/2", "GET http://allowed.example/ HTTP/2.0\r\nHost: allowed.example\r\n\r\n", 505},
		{"two spaces", "GET  http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n", 400},
		{"folded header", "GET http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nX-A: b\r\n c\r\n\r\n", 400},
		{"space before colon", "GET http://allowed.example/ HTTP/1.1\r\nHost : allowed.example\r\n\r\n", 400},
		{"control character", "GET http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nX-A: b\rc\r\n\r\n", 400},
		{"both framings", "POST http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"other transfer coding", "POST http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
		{"chunked in HTTP/1.0", "POST http://allowed.example/ HTTP/1.0\r\nHost: allowed.example\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"signed Content-Length", "POST http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: +3\r\n\r\n", 400},
		{"two Content-Lengths", "POST http://allowed.example/ HTTP/1.1\r\nHost: allowed.example\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", proxy)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(30 * time.Second))
			io.WriteString(conn, c.raw)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.want)
			}
		})
	}
}

func TestCloseEndsOpenTunnels(t *testing.T) {
	// An upstream that accepts and then never speaks.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	p, err := New([]string{l.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(pl) }()
	c, br, code := connect(t, pl.Addr().String(), l.Addr().String())
	if code != 200 {
		t.Fatalf("CONNECT: %d", code)
	}
	up := <-accepted
	defer up.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the tunnel's client side is still open after Close")
	}
	up.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := up.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the tunnel's upstream side after Close: %v, want EOF", err)
	}
	c.Close()
}

func TestEnv(t *testing.T) {
	env := Env("127.0.0.1:3128")
	for _, want := range []string{
		"HTTP_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128", "ALL_PROXY=http://127.0.0.1:3128",
		"all_proxy=http://127.0.0.1:3128", "NO_PROXY=localhost,127.0.0.1,::1",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env lacks %s: %q", want, env)
		}
	}
}

// pipes counts this process's descriptors that are pipes.
func pipes(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("SKIP: no /proc/self/fd here: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}

// TestRelaysLeaveNoPipeOpen: the proxy's relays copy with reads and
// writes of their own: io.Copy between two TCP connections splices them
// through a pipe from the runtime's pool, whose two descriptors outlive
// the run until a garbage collection frees them (a sandboxed run's
// descriptor check caught them).
func TestRelaysLeaveNoPipeOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIP: splice is Linux's")
	}
	_, addr := upstream(t)
	_, proxy := serve(t, addr)
	before := pipes(t)
	c, br, code := connect(t, proxy, addr)
	if code != http.StatusOK {
		t.Fatalf("CONNECT %s: %d, want 200", addr, code)
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: tunnelled\r\nConnection: close\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, resp.Body)
	}
	c.Close()
	if code, _ := get(t, client(proxy), "http://"+addr+"/x"); code != 200 {
		t.Fatalf("GET through the proxy: %d", code)
	}
	if after := pipes(t); after > before {
		t.Fatalf("%d pipes open after the relays, %d before", after, before)
	}
}
