package web

import (
	"errors"
	"strconv"
	"strings"

	"github.com/corralrun/corral"
)

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) (int, error) { return strconv.Atoi(strings.TrimSpace(s)) }

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
