package egress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// received is what a raw origin got on one connection: every byte until
// the proxy closed it, and the requests in them, with their bodies.
type received struct {
	raw      string
	requests []*http.Request
	bodies   []string
}

// rawOrigin serves an origin on the loopback that answers the first
// request of each connection with 200 "ok" and Connection: close, as a
// server told Connection: close does, half-closes, and reads on until the
// proxy closes the connection; then it sends what it received. Call it
// before serve, so that the proxy closes first at cleanup.
func rawOrigin(t *testing.T) (string, <-chan received) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan received, 16)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(30 * time.Second))
				var raw bytes.Buffer
				br := bufio.NewReader(io.TeeReader(c, &raw))
				var r received
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						break
					}
					body, err := io.ReadAll(req.Body)
					if err != nil {
						break
					}
					r.requests, r.bodies = append(r.requests, req), append(r.bodies, string(body))
					if len(r.requests) == 1 {
						io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
						c.(*net.TCPConn).CloseWrite()
					}
				}
				io.Copy(io.Discard, br)
				r.raw = raw.String()
				got <- r
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return l.Addr().String(), got
}

// receivedBy waits for what the origin received on its next connection.
func receivedBy(t *testing.T, got <-chan received) received {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the origin received no connection that ended")
		return received{}
	}
}

// sendRaw writes raw to the proxy in one write and returns the response
// to it and what came after it until the proxy closed.
func sendRaw(t *testing.T, proxy, raw string) (*http.Response, string, string) {
	t.Helper()
	c, br := dialTimed(t, proxy)
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("after the response: %v, want the proxy's close", err)
	}
	return resp, string(body), string(rest)
}

// TestPlainHTTPPipelinedRequestNeverReachesTheOrigin: a second request
// sent on a plain-HTTP connection right behind the first (here with a
// Host that is not allowed) does not reach the origin, and the client
// gets one response and then the end of the connection.
func TestPlainHTTPPipelinedRequestNeverReachesTheOrigin(t *testing.T) {
	origin, got := rawOrigin(t)
	_, proxy := serve(t, origin)
	resp, body, rest := sendRaw(t, proxy, fmt.Sprintf(
		"GET http://%s/first HTTP/1.1\r\nHost: %s\r\n\r\n"+
			"GET http://%s/second HTTP/1.1\r\nHost: not-allowed.example\r\n\r\n", origin, origin, origin))
	if resp.StatusCode != 200 || body != "ok" || rest != "" {
		t.Fatalf("response %d %q, then %q; want 200 \"ok\" and the end", resp.StatusCode, body, rest)
	}
	r := receivedBy(t, got)
	if len(r.requests) != 1 || r.requests[0].RequestURI != "/first" || strings.Contains(r.raw, "second") {
		t.Fatalf("the origin received %d requests:\n%s\nwant only GET /first", len(r.requests), r.raw)
	}
}

// TestPlainHTTPSendsTheURIsHostWithoutHopByHopFields: the origin gets
// the URI's host as the one Host, whatever Host the client sent, the path
// in origin form, Connection: close, none of the hop-by-hop fields (nor
// those the client's Connection names), and the client's other fields.
func TestPlainHTTPSendsTheURIsHostWithoutHopByHopFields(t *testing.T) {
	origin, got := rawOrigin(t)
	_, proxy := serve(t, origin)
	resp, _, _ := sendRaw(t, proxy, fmt.Sprintf("GET http://%s/x?q=1 HTTP/1.1\r\n"+
		"Host: fronted.example\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nProxy-Connection: keep-alive\r\n"+
		"Proxy-Authorization: Basic Zm9vOmJhcg==\r\nKeep-Alive: 300\r\nTE: trailers\r\nTrailer: X-T\r\nUpgrade: websocket\r\n"+
		"X-Kept: yes\r\n\r\n", origin))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	r := receivedBy(t, got)
	req := r.requests[0]
	if req.Host != origin || strings.Count(strings.ToLower(r.raw), "\r\nhost:") != 1 {
		t.Errorf("Host %q, want %q, once:\n%s", req.Host, origin, r.raw)
	}
	if req.RequestURI != "/x?q=1" {
		t.Errorf("request target %q, want /x?q=1", req.RequestURI)
	}
	if c := req.Header.Values("Connection"); len(c) != 1 || c[0] != "close" {
		t.Errorf("Connection %q, want close", c)
	}
	for _, hop := range []string{"X-Hop", "Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Te", "Trailer", "Upgrade"} {
		if v, ok := req.Header[hop]; ok {
			t.Errorf("the origin got %s: %q", hop, v)
		}
	}
	if req.Header.Get("X-Kept") != "yes" {
		t.Errorf("X-Kept did not reach the origin:\n%s", r.raw)
	}
}

// TestPlainHTTPRelaysRequestBodiesIntact: a body framed by
// Content-Length (larger than the proxy's buffer) and a chunked one
// (extensions and a trailer included) arrive whole, the chunked one byte
// for byte as sent, and the proxy finds their end: what follows them does
// not reach the origin.
func TestPlainHTTPRelaysRequestBodiesIntact(t *testing.T) {
	origin, got := rawOrigin(t)
	_, proxy := serve(t, origin)
	large := strings.Repeat("0123456789abcdef", 8<<10)
	chunks := "5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
	for _, c := range []struct {
		name, framing, body, want string
	}{
		{"content-length", fmt.Sprintf("Content-Length: %d", len(large)), large, large},
		{"chunked", "Transfer-Encoding: chunked", chunks, "hello, world"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, _, _ := sendRaw(t, proxy, fmt.Sprintf("POST http://%s/up HTTP/1.1\r\nHost: %s\r\n%s\r\n\r\n%s"+
				"GET http://%s/smuggled HTTP/1.1\r\nHost: %s\r\n\r\n", origin, origin, c.framing, c.body, origin, origin))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d, want 200", resp.StatusCode)
			}
			r := receivedBy(t, got)
			if len(r.bodies) != 1 || r.bodies[0] != c.want {
				t.Fatalf("the origin got %d requests, the first's body %d bytes; want one with the %d bytes sent", len(r.requests), len(r.bodies[0]), len(c.want))
			}
			if !strings.HasSuffix(r.raw, "\r\n\r\n"+c.body) {
				t.Errorf("the body did not arrive as sent, or something came after it:\n%s", r.raw)
			}
		})
	}
}

// echoBytes serves on the loopback an echo of every byte, until the
// client's half-close.
func echoBytes(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				io.Copy(c, c)
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return l.Addr().String()
}

// TestConnectRelaysBytesBehindItsHeadFirstAndIntact: bytes a client sends
// in the same write as its CONNECT (more than the proxy reads at once)
// reach the upstream first and intact, and the client's half-close ends
// the tunnel.
func TestConnectRelaysBytesBehindItsHeadFirstAndIntact(t *testing.T) {
	up := echoBytes(t)
	_, proxy := serve(t, up)
	eager := make([]byte, 20<<10)
	for i := range eager {
		eager[i] = byte(i * 7)
	}
	c, br := dialTimed(t, proxy)
	if _, err := c.Write(append(fmt.Appendf(nil, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", up, up), eager...)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	echo := make([]byte, len(eager))
	if _, err := io.ReadFull(br, echo); err != nil || !bytes.Equal(echo, eager) {
		t.Fatalf("the echo of the bytes behind the head: %v, intact: %v", err, bytes.Equal(echo, eager))
	}
	c.(*net.TCPConn).CloseWrite()
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the half-close: %q %v, want EOF", rest, err)
	}
}

// TestHeadOverTheLimitGets431AndDialsNothing: a request head over
// maxHeaderBytes gets 431, for a plain request and a CONNECT to an
// allowed host, and the host is not dialled.
func TestHeadOverTheLimitGets431AndDialsNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	origin := l.Addr().String()
	_, proxy := serve(t, origin)
	huge := "X-Huge: " + strings.Repeat("a", 2*maxHeaderBytes) + "\r\n\r\n"
	for _, head := range []string{
		fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\n", origin, origin),
		fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\n", origin, origin),
	} {
		resp, body, _ := sendRaw(t, proxy, head+huge)
		if resp.StatusCode != 431 {
			t.Fatalf("%s: %d %q, want 431", strings.Fields(head)[0], resp.StatusCode, body)
		}
	}
	// A dial of the origin would have been made before the answer: it
	// would wait in the listener's queue.
	l.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if c, err := l.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("the origin was dialled: %v", err)
	}
}

// TestDialFailureGets502: an allowed host that refuses the connection
// gets 502 with the dial's error.
func TestDialFailureGets502(t *testing.T) {
	closed := freePort(t)
	_, proxy := serve(t, closed)
	resp, body, _ := sendRaw(t, proxy, fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", closed, closed))
	if resp.StatusCode != 502 || !strings.Contains(body, closed) || !strings.Contains(body, "refused") {
		t.Fatalf("%d %q, want 502 naming %s and the refusal", resp.StatusCode, body, closed)
	}
}

// TestCloseEndsRequestsInProgress: Close ends a connection still sending
// its head and a plain request whose origin has not answered, and returns
// once their goroutines are gone (TestMain checks).
func TestCloseEndsRequestsInProgress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
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
	partial, partialBr := dialTimed(t, pl.Addr().String())
	io.WriteString(partial, "GET http://"+l.Addr().String())
	waiting, waitingBr := dialTimed(t, pl.Addr().String())
	fmt.Fprintf(waiting, "GET http://%s/ HTTP/1.1\r\nHost: x\r\n\r\n", l.Addr())
	up := <-accepted
	defer up.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for name, br := range map[string]*bufio.Reader{"a client sending its head": partialBr, "a client awaiting its answer": waitingBr} {
		if b, err := io.ReadAll(br); err != nil || len(b) != 0 {
			t.Errorf("%s after Close: %q %v, want EOF", name, b, err)
		}
	}
	up.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadAll(up); err != nil {
		t.Errorf("the origin's side after Close: %v, want EOF", err)
	}
}
