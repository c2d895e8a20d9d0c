package main

import (
	"errors"
	"flag"
	"time"
)

// durationFlag is a duration flag that refuses negative values: a
// timeout, a grace or a drain shorter than nothing is a mistake, never
// "none" (0 says that, where it means anything).
type durationFlag struct{ d *time.Duration }

var errNegativeDuration = errors.New("must not be negative (0 means none)")

func (f durationFlag) String() string {
	if f.d == nil {
		return "0s" // the zero value, for flag's defaults
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("parse error: want a duration such as 30s, 1.5m or 2h")
	}
	if d < 0 {
		return errNegativeDuration
	}
	*f.d = d
	return nil
}

// nonNegDuration registers a duration flag that refuses negative values.
func nonNegDuration(fs *flag.FlagSet, name string, def time.Duration, usage string) *time.Duration {
	d := def
	fs.Var(durationFlag{&d}, name, usage)
	return &d
}
