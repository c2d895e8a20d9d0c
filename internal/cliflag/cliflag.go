// Package cliflag holds what corral's command-line programs (corral and
// its companions corral-client, corral-mcp and corral-serve) share beyond
// the library: flag types and the flags several commands take (the
// sandbox's, --grace, telemetry's, webhooks'), the signals that stop a
// command and those every command drops, the exit statuses, the default
// data directory, the names and summaries of the companions' commands.
// One place for each, so that `corral run`, `corral mcp`, `corral serve`
// and the client commands agree. It imports no HTTP: corral links it.
package cliflag

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
)

// StringList is a repeatable string flag: each use appends its value.
type StringList []string

func (l *StringList) String() string     { return strings.Join(*l, ",") }
func (l *StringList) Set(s string) error { *l = append(*l, s); return nil }

// DefaultDataDir is CORRAL_DATA, else $XDG_DATA_HOME/corral, else
// ~/.local/share/corral: where corral serve keeps its database and token,
// and where the client commands read the token.
func DefaultDataDir() string {
	if d := os.Getenv("CORRAL_DATA"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "corral")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "corral")
	}
	return ""
}

// Version is the module version corral's programs were built at, or "dev"
// for a build from a working tree.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// NegIfZero maps a duration of zero, as a person types it ("none"), to the
// negative value the libraries read as none (their zero means the default).
func NegIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
