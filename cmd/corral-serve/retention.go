package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral/service"
)

// parseRetention reads --retain-executions: a duration ("30d", "720h"),
// a count ("100000"), both ("30d,100000"), or "off". It returns the
// service's RetainFor and RetainCount (zero count: the default; negative:
// none).
func parseRetention(spec string) (time.Duration, int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return 0, 0, nil
	}
	if spec == "off" {
		return 0, -1, nil
	}
	var age time.Duration
	count := -1
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if n, err := strconv.Atoi(part); err == nil {
			if n <= 0 {
				return 0, 0, fmt.Errorf("--retain-executions %q: a count must be positive (or say off)", spec)
			}
			count = n
			continue
		}
		d, err := parseDays(part)
		if err != nil || d <= 0 {
			return 0, 0, fmt.Errorf("--retain-executions %q: want a duration (30d, 720h), a count (100000), both (30d,100000), or off", spec)
		}
		age = d
	}
	return age, count, nil
}

// parseDays is time.ParseDuration that also reads days ("30d").
func parseDays(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return 0, err
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	return time.ParseDuration(s)
}

// retentionHelp is the flag's help.
var retentionHelp = fmt.Sprintf("keep finished executions and their logs for a `DURATION` (30d, 720h), up to a COUNT, or both (30d,100000); off keeps everything (default: the newest %d)", service.DefaultRetainCount)
