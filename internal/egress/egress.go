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
// A plain-HTTP connection carries one request. The proxy sends it upstream
// with the URI's host as its Host and Connection: close, relays the
// response as the upstream sends it until the upstream closes, and then
// closes the client's connection; nothing the client sends after that
// request's body reaches the upstream. A pipelined request could carry a
// Host that is not allowed, which a front end shared by several hosts
// would route to, and a server told Connection: close processes no
// further request (RFC 9112 §9.6). Clients open a new connection for the
// next request, as they do when a server closes one.
//
// The package speaks HTTP/1.1 itself, on net alone: it does not import
// net/http. Every program that imports proc links it, the corral CLI
// included, and each start of such a program pays for the initialisers and
// pages of all it links; net/http brings crypto/tls, crypto/x509, mime and
// an HTTP/2 stack that the proxy never uses.
//
// A port of the host's loopback is not reached through the proxy (the
// run's NO_PROXY sends loopback addresses to the run's own loopback) but
// through a Forward: a listener at the same address inside the sandbox,
// relayed to the host's port.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/corralrun/corral"
)

// Limits of the proxy. A tunnel, once open, and a plain request once its
// head is read, have no idle limit: the run's own timeout bounds them, and
// Close ends them.
const (
	maxHeaderBytes    = 64 << 10
	readHeaderTimeout = 30 * time.Second
	dialTimeout       = 30 * time.Second
	maxDenied         = 256

	// lingerTimeout and maxLinger bound what the proxy reads and drops
	// from a client after its exchange (linger).
	lingerTimeout = 2 * time.Second
	maxLinger     = 256 << 10
)

// Proxy is an allowlisting HTTP proxy. Create it with New, serve it with
// Serve, end it with Close. Each client connection is served by one
// goroutine (a tunnel or a plain request adds one while it lasts); they
// are all gone when Close returns.
type Proxy struct {
	rules  []rule
	dialer net.Dialer
	ctx    context.Context // ended by Close: dials in flight give up
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{} // clients' and upstreams', closed by Close
	denied    []string
	refused   map[string]bool
	wg        sync.WaitGroup // Serve loops and the clients' goroutines
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
	p := &Proxy{
		dialer:    net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second},
		listeners: map[net.Listener]struct{}{},
		conns:     map[net.Conn]struct{}{},
		refused:   map[string]bool{},
	}
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
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Serve accepts connections on l until Close, and serves each in a
// goroutine of its own. It closes l, and returns nil after Close (at once
// when called after it) or the error that ended l. An accept that fails
// for want of file descriptors is retried after a pause (up to a second),
// as net/http's server does.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return nil
	}
	p.listeners[l] = struct{}{}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	defer l.Close()
	var pause time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				pause = min(max(2*pause, 5*time.Millisecond), time.Second)
				if p.sleep(pause) {
					continue
				}
			}
			p.mu.Lock()
			closed := p.closed
			delete(p.listeners, l)
			p.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		pause = 0
		if p.track(c, true) {
			go p.handle(c)
		}
	}
}

// sleep waits d, and reports false when Close came first.
func (p *Proxy) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// Close stops the proxy: it closes its listeners and every connection,
// the clients' and the upstreams' (which ends every tunnel and request in
// progress), and gives up the dials in flight. It returns nil once every
// Serve and every goroutine of the proxy has returned.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	listeners, conns := p.listeners, p.conns
	p.listeners, p.conns = map[net.Listener]struct{}{}, map[net.Conn]struct{}{}
	p.mu.Unlock()
	p.cancel()
	for l := range listeners {
		l.Close()
	}
	for c := range conns {
		c.Close()
	}
	p.wg.Wait()
	return nil
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

// check returns the address to dial for host and port when they are
// allowed: host in lower case without a trailing dot, as it is checked.
// Otherwise it returns the 400 or 403 to answer, and records a refused
// HOST:PORT.
func (p *Proxy) check(host, port string) (string, *statusError) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || !validHost(host) {
		return "", badRequest("bad host %q port %q", host, port)
	}
	target := net.JoinHostPort(host, port)
	if p.allowed(host, n) {
		return target, nil
	}
	p.mu.Lock()
	if !p.refused[target] && len(p.denied) < maxDenied {
		p.refused[target] = true
		p.denied = append(p.denied, target)
	}
	p.mu.Unlock()
	return "", &statusError{403, fmt.Sprintf("corral egress proxy: %s is not an allowed host of this sandbox (allow it with --allow-host)\n", target)}
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

// dial connects to addr, an allowed host's name and port, and tracks the
// connection for Close; the caller untracks it. Close gives up a dial in
// flight.
func (p *Proxy) dial(addr string) (net.Conn, error) {
	c, err := p.dialer.DialContext(p.ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if !p.track(c, false) {
		return nil, errClosed
	}
	return c, nil
}

// errClosed is dial's error once Close was called.
var errClosed = errors.New("proxy closed")

// dialFailed answers a client whose upstream could not be dialled with
// 502, unless the proxy was closed meanwhile: Close ends the exchange
// without an answer, whether the dial was cut short or had just
// succeeded.
func (p *Proxy) dialFailed(c net.Conn, br *bufio.Reader, target string, err error) {
	if errors.Is(err, errClosed) || p.ctx.Err() != nil {
		return
	}
	refuse(c, br, &statusError{502, fmt.Sprintf("corral egress proxy: %s: %v\n", target, err)})
}

// track registers c for Close (and, for a client, the goroutine that
// serves it, for Close to wait for); when the proxy is closed already it
// closes c and returns false.
func (p *Proxy) track(c net.Conn, client bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	if client {
		p.wg.Add(1)
	}
	return true
}

// untrack closes c and forgets it.
func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// splice copies a to b and b to a until both directions end, passing on
// each half-close.
func splice(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		relay(b, a)
		closeWrite(b)
	}()
	relay(a, b)
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
