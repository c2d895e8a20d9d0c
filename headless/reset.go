package headless

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corralrun/corral"
)

// resetOf sets r.ResetAt from the words of a rate or usage limit, read at
// now: the turn's reason, final text, the API failure and stderr.
func resetOf(r *Result, now time.Time) {
	if r.ErrorType != corral.ErrorRateLimit && r.ErrorType != corral.ErrorQuota {
		return
	}
	texts := []string{r.Reason, r.Text, r.StderrTail}
	if r.APIFailure != nil {
		texts = append(texts, r.APIFailure.Error)
	}
	for _, s := range texts {
		if at, ok := ResetTime(s, now); ok {
			r.ResetAt = &at
			r.ErrorType = corral.ErrorRateLimit
			return
		}
	}
}

// resetRE holds the patterns ResetTime reads, compiled on its first use:
// a command that never reads a limit's reset pays nothing at start.
var resetRE = sync.OnceValue(func() (r struct{ unix, in, at, part *regexp.Regexp }) {
	r.unix = regexp.MustCompile(`limit reached\|(\d{10})\b`)
	r.in = regexp.MustCompile(`(?i)(?:try again|retry|resets?|available again)(?: after| in)\s+((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)`)
	r.at = regexp.MustCompile(`(?i)(?:resets?|try again|available again)(?: at| on)?\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\b`)
	r.part = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b`)
	return r
})

// ResetTime reads when a limit resets from the words that announce it,
// as agents and providers write them: "limit reached|1767225600" (a Unix
// time), "try again in 2 hours 28 minutes", "retry after 30 seconds",
// "resets at 5:30pm", "resets 17:00" (a clock time: the next one after
// now, in now's location). It reports false when s names no time.
func ResetTime(s string, now time.Time) (time.Time, bool) {
	if m := resetRE().unix.FindStringSubmatch(s); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Unix(sec, 0), true
		}
	}
	if m := resetRE().in.FindStringSubmatch(s); m != nil {
		var d time.Duration
		for _, p := range resetRE().part.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.ParseFloat(p[1], 64)
			unit := strings.ToLower(p[2])
			switch {
			case strings.HasPrefix(unit, "d"):
				d += time.Duration(n * float64(24*time.Hour))
			case strings.HasPrefix(unit, "h"):
				d += time.Duration(n * float64(time.Hour))
			case strings.HasPrefix(unit, "m"):
				d += time.Duration(n * float64(time.Minute))
			default:
				d += time.Duration(n * float64(time.Second))
			}
		}
		if d > 0 {
			return now.Add(d), true
		}
	}
	if m := resetRE().at.FindStringSubmatch(s); m != nil && (m[2] != "" || m[3] != "") {
		h, _ := strconv.Atoi(m[1])
		min, _ := strconv.Atoi(m[2])
		switch strings.ToLower(m[3]) {
		case "pm":
			if h < 12 {
				h += 12
			}
		case "am":
			if h == 12 {
				h = 0
			}
		}
		if h > 23 || min > 59 {
			return time.Time{}, false
		}
		at := time.Date(now.Year(), now.Month(), now.Day(), h, min, 0, 0, now.Location())
		if !at.After(now) {
			at = at.Add(24 * time.Hour)
		}
		return at, true
	}
	return time.Time{}, false
}
