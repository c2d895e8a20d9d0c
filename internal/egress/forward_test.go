package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProxyReachesOnlyTheNamedLoopbackPort: an allowed port of the host's
// loopback lets that port through the proxy, and no other.
func TestProxyReachesOnlyTheNamedLoopbackPort(t *testing.T) {
	_, allowed := upstream(t)
	_, other := upstream(t)
	port := allowed[strings.LastIndexByte(allowed, ':')+1:]
	otherPort := other[strings.LastIndexByte(other, ':')+1:]
	p, proxy := serve(t, "localhost:"+port, allowed)
	c := client(proxy)
	for _, u := range []string{"http://localhost:" + port + "/", "http://" + allowed + "/"} {
		if code, body := get(t, c, u); code != http.StatusOK || !strings.HasPrefix(body, "hello from") {
			t.Errorf("GET %s: %d %q, want the allowed port's answer", u, code, body)
		}
	}
	for _, u := range []string{"http://localhost:" + otherPort + "/", "http://" + other + "/"} {
		if code, _ := get(t, c, u); code != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403 for a port that was not allowed", u, code)
		}
	}
	if _, _, code := connect(t, proxy, "localhost:"+otherPort); code != http.StatusForbidden {
		t.Errorf("CONNECT localhost:%s: %d, want 403", otherPort, code)
	}
	if got := p.Denied(); len(got) != 2 {
		t.Errorf("denied %q, want the other port by name and by address", got)
	}
}

// echoLines serves a line-by-line echo on the loopback: each line comes
// back as soon as it has arrived; at the client's half-close it closes.
func echoLines(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					io.WriteString(c, "echo "+line)
				}
			}()
		}
	}()
	return l.Addr().String()
}

// forwarding serves a Forward to targets on a new loopback listener and
// returns the Forward and the listener's address; cleanup closes it.
func forwarding(t *testing.T, targets ...string) (*Forward, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := NewForward()
	served := make(chan error, 1)
	go func() { served <- f.Serve(l, targets) }()
	t.Cleanup(func() {
		f.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return f, l.Addr().String()
}

// freePort returns a loopback address where nothing listens.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func dialTimed(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return c, bufio.NewReader(c)
}

// TestForwardRelaysBothWaysAsBytesArrive: each line's echo comes back
// before the next line is sent (a relay that held bytes back would stall),
// and the client's half-close reaches the host's service, whose close
// comes back as EOF.
func TestForwardRelaysBothWaysAsBytesArrive(t *testing.T) {
	_, in := forwarding(t, freePort(t), echoLines(t))
	c, br := dialTimed(t, in)
	for i := range 3 {
		fmt.Fprintf(c, "line %d\n", i)
		got, err := br.ReadString('\n')
		if err != nil || got != "echo line "+strconv.Itoa(i)+"\n" {
			t.Fatalf("line %d: %q %v", i, got, err)
		}
	}
	c.(*net.TCPConn).CloseWrite()
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Fatalf("after the half-close: %q %v, want EOF", rest, err)
	}
}

// TestForwardResetsWhenNoTargetAnswers: a connection that no target
// accepts is reset, as a refused one would be, and the Forward goes on.
func TestForwardResetsWhenNoTargetAnswers(t *testing.T) {
	_, in := forwarding(t, freePort(t))
	for i := range 2 {
		// The reset may come before connect() returns, or at the first read.
		c, err := net.Dial("tcp", in)
		if err == nil {
			c.SetDeadline(time.Now().Add(30 * time.Second))
			_, err = c.Read(make([]byte, 1))
			c.Close()
		}
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("connection %d: %v, want a reset", i, err)
		}
	}
}

// TestForwardCloseEndsItsRelays: Close ends an open relay (the client
// reads EOF) and returns once its goroutines are gone (TestMain checks).
func TestForwardCloseEndsItsRelays(t *testing.T) {
	f, in := forwarding(t, echoLines(t))
	c, br := dialTimed(t, in)
	io.WriteString(c, "x\n")
	if got, _ := br.ReadString('\n'); got != "echo x\n" {
		t.Fatalf("relay: %q", got)
	}
	f.Close()
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the relay is still open after Close")
	}
}
