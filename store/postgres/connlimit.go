package postgres

import (
	"context"
	"net"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/corralrun/corral/internal/mutant"
)

// connGate bounds the connections a store has open to the server at
// once, whoever opens them: the pool, River's listener (which River
// takes out of the pool, so that the pool no longer counts it) and any
// reconnection of either. Every connection is dialled through it; a dial
// beyond the bound waits, for as long as its context allows, until a
// connection of the store closes.
type connGate struct {
	slots chan struct{}
	dial  pgconn.DialFunc

	mu         sync.Mutex
	open, peak int
}

func newConnGate(max int, dial pgconn.DialFunc) *connGate {
	return &connGate{slots: make(chan struct{}, max), dial: dial}
}

// Dial is a pgconn.DialFunc: it takes a slot, dials, and gives the slot
// back when the connection closes (or when the dial fails).
func (g *connGate) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := g.take(ctx); err != nil {
		return nil, err
	}
	c, err := g.dial(ctx, network, addr)
	if err != nil {
		g.give()
		return nil, err
	}
	g.mu.Lock()
	g.open++
	g.peak = max(g.peak, g.open)
	g.mu.Unlock()
	return &gatedConn{Conn: c, g: g}, nil
}

// take waits for a slot, as long as ctx allows.
func (g *connGate) take(ctx context.Context) error {
	if mutant.NoConnBound {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *connGate) give() {
	if !mutant.NoConnBound {
		<-g.slots
	}
}

func (g *connGate) closed() {
	g.mu.Lock()
	g.open--
	g.mu.Unlock()
	g.give()
}

// ConnStats are the connections a Store has open to the server.
type ConnStats struct {
	// Open is how many are open now, Peak the most that were open at
	// once since Open, Max the bound (Options.MaxConns as resolved).
	Open, Peak, Max int
}

// Conns returns the store's connection counts.
func (s *Store) Conns() ConnStats {
	s.gate.mu.Lock()
	defer s.gate.mu.Unlock()
	return ConnStats{Open: s.gate.open, Peak: s.gate.peak, Max: cap(s.gate.slots)}
}

// gatedConn gives its slot back once, on the first Close.
type gatedConn struct {
	net.Conn
	g    *connGate
	once sync.Once
}

func (c *gatedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.g.closed)
	return err
}
