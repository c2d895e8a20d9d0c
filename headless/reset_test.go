package headless

import (
	"testing"
	"time"
)

func TestResetTimeReadsTheWordsOfLimits(t *testing.T) {
	now := time.Date(2026, 12, 1, 14, 10, 0, 0, time.UTC)
	for s, want := range map[string]time.Time{
		"Claude AI usage limit reached|1767225600":                                        time.Unix(1767225600, 0),
		"You've hit your usage limit. Upgrade to Pro or try again in 2 hours 28 minutes.": now.Add(2*time.Hour + 28*time.Minute),
		"Rate limited: retry after 30 seconds":                                            now.Add(30 * time.Second),
		"try again in 1.5h":                                                               now.Add(90 * time.Minute),
		"5-hour limit reached ∙ resets 5pm":                                               time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC),
		"limit reached, resets at 9:30 am":                                                time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC),
		"usage resets 13:05":                                                              time.Date(2026, 12, 2, 13, 5, 0, 0, time.UTC),
		"You've hit your usage limit. Try again at 3:02 PM.":                              time.Date(2026, 12, 1, 15, 2, 0, 0, time.UTC),
	} {
		got, ok := ResetTime(s, now)
		if !ok || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{
		"API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 50 requests per minute.",
		"exceeded retry limit, last status: 429 Too Many Requests",
		"Credit balance is too low",
		"resets 5",
	} {
		if got, ok := ResetTime(s, now); ok {
			t.Errorf("%q: read a reset time %v from no time", s, got)
		}
	}
}
