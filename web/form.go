package web

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/corralrun/corral"
)

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) (int, error) { return strconv.Atoi(strings.TrimSpace(s)) }

func zeroEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}

// durText shows a duration as the form takes it back ("90s", "1h30m0s").
func durText(d corral.Duration) string {
	if d == 0 {
		return ""
	}
	return time.Duration(d).String()
}

// parseDur reads a form's duration field: empty, a Go duration or a
// number of seconds.
func parseDur(v string) (corral.Duration, error) {
	d, err := corral.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("Enter a duration such as 90s, 15m or 1h30m, or leave it empty.")
	}
	if d < 0 {
		return 0, errors.New("A duration cannot be negative.")
	}
	return d, nil
}

func storeOverflow(s string) corral.Overflow { return corral.Overflow(s) }
