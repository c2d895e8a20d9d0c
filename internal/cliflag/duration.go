package cliflag

import (
	"errors"
	"flag"
	"time"

	"github.com/corralrun/corral/proc"
)

// durationFlag is a duration flag that refuses negative values: a
// timeout, a grace or a drain shorter than nothing is a mistake, never
// "none" (0 says that, where it means anything).
type durationFlag struct{ d *time.Duration }

// ErrNegativeDuration is the error of a negative value for a flag of
// NonNegDuration.
var ErrNegativeDuration = errors.New("must not be negative (0 means none)")

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
		return ErrNegativeDuration
	}
	*f.d = d
	return nil
}

// NonNegDuration registers a duration flag that refuses negative values.
func NonNegDuration(fs *flag.FlagSet, name string, def time.Duration, usage string) *time.Duration {
	d := def
	fs.Var(durationFlag{&d}, name, usage)
	return &d
}

// Grace registers --grace on fs, with the one meaning it has in every
// command of corral: the time between the stop signal and SIGKILL,
// proc.DefaultGrace unless given, and 0 for none (SIGKILL at once). The
// returned function gives the value as proc.Spec.Grace and the layers
// above it take it (negative for none). A negative --grace is refused.
func Grace(fs *flag.FlagSet, what string) func() time.Duration {
	d := NonNegDuration(fs, "grace", proc.DefaultGrace, "`DUR` between the stop signal and SIGKILL "+what+" (0: SIGKILL at once)")
	return func() time.Duration { return NegIfZero(*d) }
}
