package lockout

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestAClientThatFailsWaitsLongerEachTime(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	g := &Guard{Now: c.now}
	for i := range DefaultFree {
		if w := g.Wait("10.0.0.1:5555"); w != 0 {
			t.Fatalf("after %d failures: wait %v, want none while free", i, w)
		}
		g.Fail("10.0.0.1:5555")
	}
	var last time.Duration
	for i := range 12 {
		w := g.Wait("10.0.0.1:6666") // another port: the same client
		if w <= last && w != DefaultMax {
			t.Fatalf("failure %d past the free ones: wait %v, not more than %v", i, w, last)
		}
		if w > DefaultMax {
			t.Fatalf("wait %v beyond the ceiling", w)
		}
		last = w
		c.t = c.t.Add(w)
		g.Fail("10.0.0.1")
	}
	if last != DefaultMax {
		t.Fatalf("the wait stopped growing at %v before the ceiling", last)
	}
	if RetryAfter(1500*time.Millisecond) != "2" || RetryAfter(0) != "1" {
		t.Fatal("Retry-After is not whole seconds rounded up")
	}
}

func TestACleanClientIsNeverHeldBack(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	g := &Guard{Now: c.now}
	// A guesser spread over many addresses puts the token under lock for
	// everyone who failed...
	for i := range 500 {
		g.Fail("192.0.2." + itoa(i%250) + ":1")
	}
	if w := g.Wait("192.0.2.7"); w <= 0 {
		t.Fatal("a failing client of a guessing fleet is not held back")
	}
	// ... but not for an address that has not failed.
	if w := g.Wait("198.51.100.9:443"); w != 0 {
		t.Fatalf("a clean client waits %v", w)
	}
	// IPv6 clients are one per /64.
	for range DefaultFree + 1 {
		g.Fail("[2001:db8:1:2::1]:80")
	}
	if g.Wait("[2001:db8:1:2::ffff]:81") == 0 {
		t.Fatal("another address of the same /64 escaped the lockout")
	}
	if g.Wait("[2001:db8:1:3::1]:80") != 0 {
		t.Fatal("another /64 was held back")
	}
	// A success clears the client.
	g.Succeed("[2001:db8:1:2::1]:9")
	if g.Wait("[2001:db8:1:2::1]:80") != 0 {
		t.Fatal("a success did not clear the client's failures")
	}
}

func TestFailuresAreForgottenAfterAQuietSpell(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	g := &Guard{Now: c.now}
	for range DefaultFree + 3 {
		g.Fail("10.0.0.2")
	}
	c.t = c.t.Add(2*DefaultMax + time.Second)
	if w := g.Wait("10.0.0.2"); w != 0 {
		t.Fatalf("still waiting %v after a long quiet spell", w)
	}
	g.Fail("10.0.0.2")
	if w := g.Wait("10.0.0.2"); w != 0 {
		t.Fatalf("one failure after the spell: wait %v, want a fresh count", w)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
