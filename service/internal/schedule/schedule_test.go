package schedule

import (
	"testing"
	"time"
)

func TestParseHonoursSecondsAndTimeZone(t *testing.T) {
	s, err := Parse("0 9 * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC) // 07:00 in New York
	if got, want := s.Next(at), time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("next %v, want %v", got, want)
	}
	s, err = Parse("*/5 * * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(at.Add(time.Second)); !got.Equal(at.Add(5 * time.Second)) {
		t.Fatalf("seconds field: %v", got)
	}
	if _, err := Parse("@every 90s", "Europe/Paris"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][2]string{{"", ""}, {"61 * * * *", ""}, {"* * * * *", "Mars/Olympus"}, {"TZ=UTC * * * * *", ""}, {"0 0 30 2 *", ""}} {
		if _, err := Parse(bad[0], bad[1]); err == nil {
			t.Errorf("Parse(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func TestEveryRefusesZeroNegativeAndFractionalIntervals(t *testing.T) {
	for _, bad := range []string{"@every 0s", "@every -5s", "@every 1.5s", "@every soon", "@every"} {
		if _, err := Parse(bad, ""); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	s, err := Parse("@every 90s", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.MinInterval(time.Now()); got != 90*time.Second {
		t.Fatalf("@every 90s: min interval %v", got)
	}
	s, _ = Parse("*/2 * * * * *", "")
	if got := s.MinInterval(time.Now()); got != 2*time.Second {
		t.Fatalf("every other second: min interval %v", got)
	}
	s, _ = Parse("0,5 9 * * *", "")
	if got := s.MinInterval(time.Now()); got != 5*time.Minute {
		t.Fatalf("9:00 and 9:05: min interval %v", got)
	}
}

func TestDecideSkipsOrRunsOnceMissedFires(t *testing.T) {
	s, _ := Parse("0 * * * *", "")
	due := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	if fire, next := Decide(s, due, due.Add(time.Second), false); !fire || !next.Equal(due.Add(time.Hour)) {
		t.Fatalf("on time: %v %v", fire, next)
	}
	late := due.Add(5*time.Hour + time.Minute)
	if fire, next := Decide(s, due, late, false); fire || !next.Equal(due.Add(6*time.Hour)) {
		t.Fatalf("skip: %v %v", fire, next)
	}
	if fire, _ := Decide(s, due, late, true); !fire {
		t.Fatal("run_once did not fire")
	}
}
