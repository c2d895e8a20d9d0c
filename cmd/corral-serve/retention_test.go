package main

import (
	"testing"
	"time"
)

func TestParseRetention(t *testing.T) {
	for spec, want := range map[string]struct {
		age   time.Duration
		count int
	}{
		"": {0, 0}, "off": {0, -1}, "30d": {30 * 24 * time.Hour, -1}, "720h": {720 * time.Hour, -1},
		"5000": {0, 5000}, "7d,5000": {7 * 24 * time.Hour, 5000}, " 1h , 10 ": {time.Hour, 10},
	} {
		age, count, err := parseRetention(spec)
		if err != nil || age != want.age || count != want.count {
			t.Errorf("%q: %v %d %v, want %v %d", spec, age, count, err, want.age, want.count)
		}
	}
	for _, bad := range []string{"0", "-5", "soon", "-1h", "0s", "3x"} {
		if _, _, err := parseRetention(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
