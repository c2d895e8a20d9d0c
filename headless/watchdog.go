package headless

import (
	"time"

	"github.com/corralrun/corral/internal/setting"
)

// The watchdogs: stall (a tool call open past its limit), idle (silence
// while nothing the agent waits for is open), background (background
// tasks outliving the wait after a result) and the budget. The Turn's
// goroutine sleeps until the earliest deadline and asks which fired.

// deadline returns the earliest moment a watchdog could fire, as of now.
// Called with t.mu held.
func (t *Turn) deadline(now time.Time) time.Time {
	var d time.Time
	earlier := func(x time.Time) {
		if !x.IsZero() && (d.IsZero() || x.Before(d)) {
			d = x
		}
	}
	if t.spec.Timeout > 0 {
		earlier(t.start.Add(t.spec.Timeout))
	}
	earlier(t.st.tl.nextStall())
	if idle := setting.Or(t.spec.IdleTimeout, DefaultIdleTimeout); idle > 0 && len(t.st.bg) == 0 {
		held, next, lapsed := t.st.tl.idleHold(now)
		if held {
			earlier(next) // a hold lapses then: look again
		} else {
			earlier(t.quietSince(lapsed).Add(idle))
		}
	}
	if wait := setting.Or(t.spec.BackgroundTimeout, DefaultBackgroundTimeout); wait > 0 && !t.st.bgSince.IsZero() {
		earlier(t.st.bgSince.Add(wait))
	}
	return d
}

// quietSince is when the agent's silence began, as the idle watchdog
// counts it: its latest output, the end of a retry wait it announced, or
// the moment an open command yielded, whichever is latest.
func (t *Turn) quietSince(lapsed time.Time) time.Time {
	q := time.Unix(0, t.lastOut.Load())
	for _, x := range []time.Time{t.st.retryUntil, lapsed} {
		if x.After(q) {
			q = x
		}
	}
	return q
}

// expired reports which watchdog has fired at now, if any: stall first,
// then idle, then background, then the budget. Called with t.mu held.
func (t *Turn) expired(now time.Time) FinalizedBy {
	if c := t.st.tl.stalled(now); c != nil {
		c.Detail = t.red.String(c.Detail)
		t.st.stalled = c
		return FinalizedByStall
	}
	if idle := setting.Or(t.spec.IdleTimeout, DefaultIdleTimeout); idle > 0 && len(t.st.bg) == 0 {
		if held, _, lapsed := t.st.tl.idleHold(now); !held && !now.Before(t.quietSince(lapsed).Add(idle)) {
			return FinalizedByIdle
		}
	}
	if wait := setting.Or(t.spec.BackgroundTimeout, DefaultBackgroundTimeout); wait > 0 && !t.st.bgSince.IsZero() && !now.Before(t.st.bgSince.Add(wait)) {
		return FinalizedByBackground
	}
	if t.spec.Timeout > 0 && !now.Before(t.start.Add(t.spec.Timeout)) {
		return FinalizedByBudget
	}
	return ""
}

// commandYield is the Timeline's Yield of a turn: Codex's commands hold
// off the idle watchdog for Spec.CommandYield, other calls for as long as
// they are open.
func (t *Turn) commandYield(tool string) time.Duration {
	if tool != "command_execution" {
		return 0
	}
	return max(setting.Or(t.spec.CommandYield, DefaultCommandYield), 0)
}
