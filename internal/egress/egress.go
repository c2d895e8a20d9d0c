// Package egress is the HTTP proxy through which a sandboxed run with
// network none reaches the hosts it is allowed: corral serves it outside
// the sandbox on a listener that lives in the sandbox's network namespace,
// and the run finds it through HTTP_PROXY and its kin (Env).
//
// It speaks CONNECT (for HTTPS and any other TCP protocol) and plain HTTP
// with absolute URIs. A request is allowed when the host it names matches
// an entry of the allowlist; the proxy then dials exactly that name, so
// the allowlist is checked against what is connected to, not against an
// address a client resolved. Everything else gets 403, and the refused
// HOST:PORT are kept in the order they were first tried.
//
// A port of the host's loopback is not reached through the proxy (the
// run's NO_PROXY sends loopback addresses to the run's own loopback) but
// through a Forward: a listener at the same address inside the sandbox,
// relayed to the host's port.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
)

// Limits of the proxy. A tunnel, once open, has no idle limit: the run's
// own timeout bounds it, and Close ends it.
const (
	maxHeaderBytes    = 64 << 10
	readHeaderTimeout = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	dialTimeout       = 30 * time.Second
	maxDenied         = 256
)

// Proxy is an allowlisting HTTP proxy. Create it with New, serve it with
// Serve, end it with Close.
type Proxy struct {
	rules     []rule
	srv       *http.Server
	forward   *httputil.ReverseProxy
	transport *http.Transport
	dialer    net.Dialer

	mu      sync.Mutex
	closed  bool
	open    int                   // client connections the server still serves
	drained *sync.Cond            // signalled when open drops to 0
	conns   map[net.Conn]struct{} // tunnels' and upstream connections, closed by Close
	denied  []string
	refused map[string]bool
	active  sync.WaitGroup // requests being handled, tunnels included
}

// rule is one allowlist entry: host (lower case, an IP literal in its
// canonical form), whether it stands for the subdomains of host, and the
// port (0: any).
type rule struct {
	host     string
	wildcard bool
	ip       net.IP
	port     int
}

// New returns a proxy that allows the entries of allow: HOST, HOST:PORT,
// or *.DOMAIN[:PORT] for the subdomains of DOMAIN (not DOMAIN itself). An
// IP address is reached only when it is listed as such.
func New(allow []string) (*Proxy, error) {
	p := &Proxy{conns: map[net.Conn]struct{}{}, refused: map[string]bool{}}
	p.drained = sync.NewCond(&p.mu)
	for _, entry := range allow {
		host, port, err := corral.SplitAllowedHost(entry)
		if err != nil {
			return nil, err
		}
		r := rule{host: host, port: port}
		if name, ok := strings.CutPrefix(host, "*."); ok {
			r.host, r.wildcard = name, true
		} else if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
			r.ip = ip
		}
		p.rules = append(p.rules, r)
	}
	p.dialer = net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	p.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dial,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	discard := log.New(io.Discard, "", 0)
	p.forward = &httputil.ReverseProxy{
		// The request goes to the host its absolute URI names, with that
		// host in its Host header: a different Host header could make a
		// shared front end route it to a host that is not allowed.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = "" },
		Transport: p.transport,
		ErrorLog:  discard,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, fmt.Sprintf("corral egress proxy: %s: %v\n", r.URL.Host, err), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          discard,
		ConnState:         p.connState,
	}
	return p, nil
}

// Serve accepts connections on l until Close, and returns nil then. It
// closes l.
func (p *Proxy) Serve(l net.Listener) error {
	err := p.srv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the proxy: its listeners, every connection and tunnel, every
// request in progress. It returns once all of them are gone.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	err := p.srv.Close()
	for c := range conns {
		c.Close()
	}
	p.active.Wait()
	p.transport.CloseIdleConnections()
	// The server's own goroutines: one that answered an error lingers up
	// to half a second before it closes its connection.
	p.mu.Lock()
	for p.open > 0 {
		p.drained.Wait()
	}
	p.mu.Unlock()
	return err
}

// connState counts the client connections the server serves, so that
// Close can wait for their goroutines, and closes one accepted while
// the proxy closes.
func (p *Proxy) connState(c net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.open++
		if p.closed {
			c.Close()
		}
	case http.StateHijacked, http.StateClosed:
		if p.open--; p.open == 0 {
			p.drained.Broadcast()
		}
	}
}

// Denied returns the HOST:PORT the proxy refused, in the order they were
// first tried (at most 256).
func (p *Proxy) Denied() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.denied...)
}

// Env returns the environment variables that send a run's HTTP clients to
// the proxy listening at addr (as the run sees it, such as
// "127.0.0.1:3128"): HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower
// case forms, and NO_PROXY for the run's own loopback.
func Env(addr string) []string {
	url := "http://" + addr
	var env []string
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, name+"="+url, strings.ToLower(name)+"="+url)
	}
	return append(env, "NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1")
}

// ServeHTTP handles one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "corral egress proxy: closed\n", http.StatusServiceUnavailable)
		return
	}
	p.active.Add(1)
	p.mu.Unlock()
	defer p.active.Done()

	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "corral egress proxy: want an absolute http:// URI, or CONNECT for anything else (https)\n", http.StatusBadRequest)
		return
	}
	port := r.URL.Port()
	if port == "" {
		port = "80"
	}
	if !p.check(w, r.URL.Hostname(), port) {
		return
	}
	p.forward.ServeHTTP(w, r)
}

// check answers 400 or 403 and returns false unless host:port is allowed.
func (p *Proxy) check(w http.ResponseWriter, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || !validHost(host) {
		http.Error(w, fmt.Sprintf("corral egress proxy: bad host %q port %q\n", host, port), http.StatusBadRequest)
		return false
	}
	if p.allowed(host, n) {
		return true
	}
	target := net.JoinHostPort(host, port)
	p.mu.Lock()
	if !p.refused[target] && len(p.denied) < maxDenied {
		p.refused[target] = true
		p.denied = append(p.denied, target)
	}
	p.mu.Unlock()
	http.Error(w, fmt.Sprintf("corral egress proxy: %s is not an allowed host of this sandbox (allow it with --allow-host)\n", target), http.StatusForbidden)
	return false
}

// validHost accepts a DNS name or an IP literal, nothing that could mean
// something else to a resolver (a zone, a space, an '@').
func validHost(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	if net.ParseIP(host) != nil {
		return !strings.Contains(host, "%")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

func (p *Proxy) allowed(host string, port int) bool {
	ip := net.ParseIP(host)
	for _, r := range p.rules {
		if !r.allowsPort(port) {
			continue
		}
		switch {
		case ip != nil:
			if r.ip != nil && r.ip.Equal(ip) {
				return true
			}
		case r.wildcard:
			if strings.HasSuffix(host, "."+r.host) {
				return true
			}
		case r.ip == nil && host == r.host:
			return true
		}
	}
	return false
}

// dial connects to an allowed address and tracks the connection, so that
// Close ends it.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := p.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t := &trackedConn{Conn: c, p: p}
	if !p.track(t) {
		return nil, errors.New("proxy closed")
	}
	return t, nil
}

// trackedConn is an upstream connection that leaves the proxy's set when
// it is closed, however it is closed (a tunnel's end, the transport's idle
// timeout).
type trackedConn struct {
	net.Conn
	p *Proxy
}

func (c *trackedConn) Close() error {
	c.p.mu.Lock()
	delete(c.p.conns, c)
	c.p.mu.Unlock()
	return c.Conn.Close()
}

func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

// track registers c for Close; when the proxy is closed already it closes
// c and returns false.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// tunnel serves CONNECT: it dials the allowed host, answers 200 and
// copies both ways until both sides are done (or Close).
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "corral egress proxy: CONNECT wants HOST:PORT\n", http.StatusBadRequest)
		return
	}
	if !p.check(w, host, port) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	up, err := p.dial(ctx, "tcp", net.JoinHostPort(strings.ToLower(strings.TrimSuffix(host, ".")), port))
	cancel()
	if err != nil {
		http.Error(w, fmt.Sprintf("corral egress proxy: %s: %v\n", r.Host, err), http.StatusBadGateway)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "corral egress proxy: cannot tunnel over this connection\n", http.StatusInternalServerError)
		return
	}
	client, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// What the client sent after the request (a TLS hello, eagerly) sits
	// in the server's buffer.
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(client, up)
}

// splice copies a to b and b to a until both directions end, passing on
// each half-close.
func splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(b, a)
		closeWrite(b)
	}()
	io.Copy(a, b)
	closeWrite(a)
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}
