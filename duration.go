package corral

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("90s", "1h30m"); it also reads a number of seconds.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = 0
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if err2 := json.Unmarshal(b, &secs); err2 != nil {
			return errors.New(`duration must be a string such as "90s" or a number of seconds`)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDuration parses a Go duration ("90s") or a plain number of seconds.
func ParseDuration(s string) (Duration, error) {
	if s == "" {
		return 0, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		return Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a Go duration such as \"90s\" or \"1h30m\"", s)
	}
	return Duration(v), nil
}
