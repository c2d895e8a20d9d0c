package egress

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// forwardDialTimeout bounds a dial of a host loopback port: a port with no
// listener refuses at once; one whose listener's backlog is full does not.
const forwardDialTimeout = 10 * time.Second

// Forward relays the connections accepted on listeners inside a sandbox's
// network namespace to ports of the host's loopback, so that a sandboxed
// run reaches an allowed host service (a model gateway, a mock API) at
// the same address, with any TCP client. Each connection is copied both
// ways as its bytes arrive (no buffering beyond the copy's, half-closes
// passed on), so streamed responses flow as they are written. Create it
// with NewForward, give it listeners with Serve, end it with Close.
type Forward struct {
	ctx    context.Context // ended by Close: dials in flight give up
	cancel context.CancelFunc
	dialer net.Dialer

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup // Serve loops and relays
}

// NewForward returns a Forward with no listener.
func NewForward() *Forward {
	f := &Forward{listeners: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.dialer = net.Dialer{Timeout: forwardDialTimeout}
	return f
}

// Serve accepts connections on l until Close, and relays each to the
// first of targets (host:port addresses of the host's loopback, tried in
// order) that accepts it; a connection that no target accepts is reset,
// as a refused one would be. It closes l, and returns nil after Close or
// the error that ended l.
func (f *Forward) Serve(l net.Listener, targets []string) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		l.Close()
		return nil
	}
	f.listeners[l] = struct{}{}
	f.wg.Add(1)
	f.mu.Unlock()
	defer f.wg.Done()
	defer l.Close()
	for {
		c, err := l.Accept()
		if err != nil {
			f.mu.Lock()
			closed := f.closed
			delete(f.listeners, l)
			f.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if f.track(c, true) {
			go f.relay(c, targets)
		}
	}
}

// relay connects c to the first target that accepts and splices the two.
func (f *Forward) relay(c net.Conn, targets []string) {
	defer f.wg.Done()
	defer f.untrack(c)
	var up net.Conn
	for _, t := range targets {
		var err error
		if up, err = f.dialer.DialContext(f.ctx, "tcp", t); err == nil {
			break
		}
	}
	if up == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		return
	}
	if !f.track(up, false) {
		return
	}
	defer f.untrack(up)
	splice(c, up)
}

// track registers c for Close (and, for a relay, the relay for Close to
// wait for); when the Forward is closed already it closes c and returns
// false.
func (f *Forward) track(c net.Conn, relay bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		c.Close()
		return false
	}
	f.conns[c] = struct{}{}
	if relay {
		f.wg.Add(1)
	}
	return true
}

func (f *Forward) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

// Close stops the Forward: its listeners, dials in flight and every
// relayed connection. It returns once every Serve and relay has returned.
func (f *Forward) Close() error {
	f.mu.Lock()
	f.closed = true
	listeners, conns := f.listeners, f.conns
	f.listeners, f.conns = map[net.Listener]struct{}{}, map[net.Conn]struct{}{}
	f.mu.Unlock()
	f.cancel()
	for l := range listeners {
		l.Close()
	}
	for c := range conns {
		c.Close()
	}
	f.wg.Wait()
	return nil
}
