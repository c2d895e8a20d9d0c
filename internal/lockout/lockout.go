// Package lockout slows down whoever guesses the service's token, without
// locking out those who know it.
//
// A Guard watches one token. It counts failed attempts per client address
// (an IPv6 client by its /64) and, across every client, per token: past a
// number of free failures, each further failure doubles the time its
// client must wait before its next attempt is even looked at, up to a
// ceiling. When the failures of all clients together pass their own
// threshold (a guesser spread over many addresses), every client that has
// failed at least once waits too. A client that has not failed is never
// made to wait: the correct token from an address with a clean record
// always gets through, and a success forgets the client's failures.
package lockout

import (
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Defaults applied to the zero values of a Guard.
const (
	DefaultFree      = 5
	DefaultFleetFree = 50
	DefaultBase      = time.Second
	DefaultMax       = 15 * time.Minute
	// maxClients bounds the clients remembered; past it, new failing
	// clients share one record.
	maxClients = 100000
)

// Guard counts failed attempts at one token. The zero value is ready to
// use with the defaults; its methods are safe for concurrent use.
type Guard struct {
	// Free is how many failures a client has before it must wait; zero
	// means DefaultFree.
	Free int
	// FleetFree is how many failures of all clients together pass before
	// every client that has failed must wait; zero means DefaultFleetFree.
	FleetFree int
	// Base is the first wait; each further failure doubles it, up to Max.
	// Zero means DefaultBase and DefaultMax.
	Base, Max time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	clients map[string]*record
	all     record
}

// record is the failures of one client, or of all of them.
type record struct {
	n     int       // failures since the record was last cleared
	last  time.Time // of the last failure
	until time.Time // no attempt is looked at before this
}

// Wait returns how long the client at addr (an IP address, with or
// without a port) must wait before its next attempt is looked at; zero
// means at once. Answer a positive wait with 429 and Retry-After.
func (g *Guard) Wait(addr string) time.Duration {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.clients[clientKey(addr)]
	if r == nil || g.stale(r, now) {
		return 0 // a clean record: never held back
	}
	until := r.until
	if g.all.until.After(until) && !g.stale(&g.all, now) {
		until = g.all.until
	}
	return max(until.Sub(now), 0)
}

// Fail records a failed attempt of the client at addr.
func (g *Guard) Fail(addr string) {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.clients == nil {
		g.clients = map[string]*record{}
	}
	key := clientKey(addr)
	r := g.clients[key]
	if r == nil {
		if len(g.clients) >= maxClients {
			g.sweep(now)
		}
		if len(g.clients) >= maxClients {
			key = "*"
			r = g.clients[key]
		}
		if r == nil {
			r = &record{}
			g.clients[key] = r
		}
	}
	g.bump(r, now, g.free())
	g.bump(&g.all, now, g.fleetFree())
}

// Succeed forgets the failures of the client at addr.
func (g *Guard) Succeed(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.clients, clientKey(addr))
}

// bump counts one failure on r and sets its wait.
func (g *Guard) bump(r *record, now time.Time, free int) {
	if g.stale(r, now) {
		*r = record{}
	}
	r.n++
	r.last = now
	if over := r.n - free + 1; over > 0 {
		r.until = now.Add(g.backoff(over))
	}
}

// backoff is the wait after the over-th failure past the free ones.
func (g *Guard) backoff(over int) time.Duration {
	base, ceil := g.Base, g.Max
	if base <= 0 {
		base = DefaultBase
	}
	if ceil <= 0 {
		ceil = DefaultMax
	}
	d := float64(base) * math.Pow(2, float64(over-1))
	if d >= float64(ceil) {
		return ceil
	}
	return time.Duration(d)
}

// stale reports whether a record is old enough to forget: no failure for
// twice the ceiling, and no wait pending.
func (g *Guard) stale(r *record, now time.Time) bool {
	ceil := g.Max
	if ceil <= 0 {
		ceil = DefaultMax
	}
	return now.Sub(r.last) > 2*ceil && !now.Before(r.until)
}

// sweep forgets the stale records.
func (g *Guard) sweep(now time.Time) {
	for k, r := range g.clients {
		if g.stale(r, now) {
			delete(g.clients, k)
		}
	}
}

func (g *Guard) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Guard) free() int {
	if g.Free > 0 {
		return g.Free
	}
	return DefaultFree
}

func (g *Guard) fleetFree() int {
	if g.FleetFree > 0 {
		return g.FleetFree
	}
	return DefaultFleetFree
}

// clientKey names the client of addr: its IP address, an IPv6 one by its
// /64 (a host often holds a whole one), or addr itself when it is not an
// address.
func clientKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return addr
		}
		ip = ap.Addr()
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// RetryAfter is the value of a Retry-After header for the wait d: whole
// seconds, rounded up, at least 1.
func RetryAfter(d time.Duration) string {
	return strconv.Itoa(max(int(math.Ceil(d.Seconds())), 1))
}
