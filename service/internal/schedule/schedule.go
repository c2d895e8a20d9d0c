// Package schedule parses cron expressions with a time zone and decides
// what a due schedule does: fire, or skip fires that were missed.
package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron expression in a time zone.
type Spec struct {
	sched cron.Schedule
}

// Parse parses expr (five fields, six with seconds first, or a descriptor
// such as @hourly or "@every 90s") in the IANA time zone tz ("" is UTC).
func Parse(expr, tz string) (*Spec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, fmt.Errorf("cron expression missing: e.g. \"0 9 * * 1-5\" or \"*/10 * * * * *\" (seconds first)")
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, fmt.Errorf("cron %q: give the time zone in time_zone, not in the expression", expr)
	}
	if tz == "" {
		tz = "UTC"
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return nil, fmt.Errorf("time zone %q: %w (want an IANA name such as Europe/Paris)", tz, err)
	}
	if rest, ok := strings.CutPrefix(expr, "@every"); ok {
		// The cron library would take zero, negative and fractional
		// intervals as one second: refuse them instead.
		d, err := time.ParseDuration(strings.TrimSpace(rest))
		switch {
		case err != nil:
			return nil, fmt.Errorf("cron %q: want \"@every\" and a duration such as 90s or 1h30m", expr)
		case d <= 0:
			return nil, fmt.Errorf("cron %q: the interval must be positive", expr)
		case d%time.Second != 0:
			return nil, fmt.Errorf("cron %q: the interval must be whole seconds", expr)
		}
	}
	s, err := parser.Parse("CRON_TZ=" + tz + " " + expr)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", expr, err)
	}
	if s.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("cron %q never fires", expr)
	}
	return &Spec{sched: s}, nil
}

// MinInterval returns the shortest time between two of the next fires
// after t (of the next 60, enough to see any cron field repeat).
func (s *Spec) MinInterval(t time.Time) time.Duration {
	shortest := time.Duration(1<<63 - 1)
	prev := s.sched.Next(t)
	for range 60 {
		next := s.sched.Next(prev)
		if next.IsZero() {
			break
		}
		shortest = min(shortest, next.Sub(prev))
		prev = next
	}
	return shortest
}

// Next returns the first fire time strictly after t, in UTC.
func (s *Spec) Next(t time.Time) time.Time {
	return s.sched.Next(t).UTC()
}

// MissedAfter is how late a fire may be taken and still count as on time;
// later than that it was missed (the service was down).
const MissedAfter = 30 * time.Second

// Decide says whether a schedule due at `due` fires now, and when it fires
// next. A fire not later than MissedAfter fires; a missed one fires only
// under runOnce, once for all the missed times.
func Decide(s *Spec, due, now time.Time, runOnce bool) (fire bool, next time.Time) {
	next = s.Next(now)
	if now.Sub(due) <= MissedAfter {
		return true, next
	}
	return runOnce, next
}
