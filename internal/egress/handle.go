package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// handle serves one client connection, c, which it closes before it
// returns: it reads a request head within readHeaderTimeout and tunnels it
// (CONNECT), passes it on (an absolute http:// URI) or answers an error.
func (p *Proxy) handle(c net.Conn) {
	defer p.wg.Done()
	defer p.untrack(c)
	c.SetReadDeadline(time.Now().Add(readHeaderTimeout))
	br := bufio.NewReader(c)
	req, err := readRequest(br)
	var se *statusError
	switch {
	case errors.As(err, &se):
		refuse(c, br, se)
		return
	case err != nil:
		return // the client went, or was silent until the deadline
	}
	c.SetReadDeadline(time.Time{})
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	switch {
	case closed:
		refuse(c, br, &statusError{503, "corral egress proxy: closed\n"})
	case req.method == "CONNECT":
		p.tunnel(c, br, req)
	default:
		p.plainHTTP(c, br, req)
	}
}

// tunnel serves CONNECT HOST:PORT: it dials exactly the allowed name,
// answers 200 and splices the client and the upstream, the bytes the
// client sent behind its request (a TLS hello, eagerly) first, until both
// directions end or Close. The request's fields are ignored.
func (p *Proxy) tunnel(c net.Conn, br *bufio.Reader, req *request) {
	host, port, err := net.SplitHostPort(req.target)
	if err != nil {
		refuse(c, br, badRequest("CONNECT wants HOST:PORT"))
		return
	}
	addr, se := p.check(host, port)
	if se != nil {
		refuse(c, br, se)
		return
	}
	up, err := p.dial(addr)
	if err != nil {
		p.dialFailed(c, br, req.target, err)
		return
	}
	defer p.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up)
}

// plainHTTP serves a request with an absolute http:// URI, the one
// request of its connection: it checks the URI's host, dials exactly that
// name and sends the request's head (upstreamHead) and body; then nothing
// more of the client's (afterRequest). It relays the upstream's bytes to
// the client as they come, from the moment it has dialled until the
// upstream closes, and then ends the client's connection (linger). A
// body the client breaks off (it goes, or breaks the framing) ends the
// exchange at once, the upstream closed. An upstream that keeps its
// connection open after its response, against Connection: close, holds
// the exchange until it closes or Close: a client that went is noticed
// only when a write to it fails.
func (p *Proxy) plainHTTP(c net.Conn, br *bufio.Reader, req *request) {
	authority, path, ok := splitAbsolute(req.target)
	if !ok {
		refuse(c, br, badRequest("want an absolute http:// URI, or CONNECT for anything else (https)"))
		return
	}
	length, se := req.bodyLength()
	if se != nil {
		refuse(c, br, se)
		return
	}
	host, port := splitAuthority(authority)
	addr, se := p.check(host, port)
	if se != nil {
		refuse(c, br, se)
		return
	}
	up, err := p.dial(addr)
	if err != nil {
		p.dialFailed(c, br, authority, err)
		return
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		relay(c, up)
		// The exchange is over: a body still on its way is not wanted,
		// and a read of it waiting must return.
		c.SetReadDeadline(time.Now())
	}()
	w := &upstreamWriter{w: up}
	_, err = w.Write(req.upstreamHead(authority, path, length))
	if err == nil {
		err = copyBody(w, br, length)
	}
	if err != nil && w.err == nil {
		// The client broke off its body (it went, or broke the framing):
		// the upstream gets no more of it, and no answer is wanted.
		up.Close()
	}
	if err == nil {
		afterRequest(up, br)
	}
	<-answered
	p.untrack(up)
	linger(c, br)
}

// upstreamWriter remembers the first error of a write to the upstream,
// to tell it from the client's: an upstream that answers and closes
// before the body's end has its answer relayed.
type upstreamWriter struct {
	w   io.Writer
	err error
}

func (u *upstreamWriter) Write(b []byte) (int, error) {
	n, err := u.w.Write(b)
	if err != nil && u.err == nil {
		u.err = err
	}
	return n, err
}

// splitAbsolute splits an absolute http:// URI (the scheme in any case)
// into its authority and its origin form: path and query, "/" when the
// path is empty. A URI with a fragment, which no request target has, is
// not one.
func splitAbsolute(target string) (authority, path string, ok bool) {
	const scheme = "http://"
	if len(target) < len(scheme) || !strings.EqualFold(target[:len(scheme)], scheme) || strings.Contains(target, "#") {
		return "", "", false
	}
	authority, path = target[len(scheme):], "/"
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority, path = authority[:i], authority[i:]
		if path[0] == '?' {
			path = "/" + path
		}
	}
	return authority, path, true
}

// splitAuthority splits HOST[:PORT] (an IPv6 host in brackets) into the
// host and the port, 80 when it names none. What check does not accept as
// a host (user information, a stray colon) stays in the host.
func splitAuthority(authority string) (host, port string) {
	if h, p, err := net.SplitHostPort(authority); err == nil {
		if p == "" {
			p = "80"
		}
		return h, p
	}
	if len(authority) > 1 && authority[0] == '[' && authority[len(authority)-1] == ']' {
		return authority[1 : len(authority)-1], "80"
	}
	return authority, "80"
}

// refuse answers se to the client, with Connection: close, and ends its
// connection (linger).
func refuse(c net.Conn, br *bufio.Reader, se *statusError) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		se.status, statusText(se.status), len(se.msg), se.msg)
	linger(c, br)
}

// linger ends a client's exchange before its connection is closed: it
// half-closes c, so that the client reads all it was sent and then its
// end, and reads and drops what the client still sends, until the client
// closes, lingerTimeout passes or maxLinger bytes are dropped. A socket
// closed with bytes unread is reset, and a reset can destroy the answer
// on its way to the client.
func linger(c net.Conn, br *bufio.Reader) {
	closeWrite(c)
	c.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.CopyN(io.Discard, br, maxLinger)
}

func statusText(status int) string {
	switch status {
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 408:
		return "Request Timeout"
	case 431:
		return "Request Header Fields Too Large"
	case 501:
		return "Not Implemented"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	case 505:
		return "HTTP Version Not Supported"
	}
	return "Error"
}
