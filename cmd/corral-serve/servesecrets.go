package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/corralrun/corral/internal/secret"
)

// scrubDBArg overwrites a --db URL that holds a password in the command
// line the kernel shows every local user (ps, /proc/PID/cmdline), and says
// that it was readable there until now. The flag's value is a copy the
// scrub does not reach.
func scrubDBArg(dbURL *string) {
	if dbPassword(*dbURL) == "" {
		return
	}
	*dbURL = strings.Clone(*dbURL)
	fmt.Fprintln(os.Stderr, "corral serve: warning: --db holds a password, which the process list showed every local user until now (it is overwritten there); set CORRAL_DB instead")
	if err := secret.ScrubArg(*dbURL); err != nil {
		fmt.Fprintln(os.Stderr, "corral serve: --db:", err)
	}
}

// hiddenFiles returns the files besides the data directory that hold the
// service's secrets and that no task may read: the TLS key, and for a
// PostgreSQL URL the password file and client key libpq's rules name
// (passfile and sslkey in the URL, PGPASSFILE and PGSSLKEY, ~/.pgpass).
// Those that do not exist are left out.
func hiddenFiles(tlsKey, dbURL string) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(out, abs) {
			if _, err := os.Stat(abs); err == nil {
				out = append(out, abs)
			}
		}
	}
	add(tlsKey)
	if !strings.HasPrefix(dbURL, "postgres://") && !strings.HasPrefix(dbURL, "postgresql://") {
		return out
	}
	if u, err := url.Parse(dbURL); err == nil {
		add(u.Query().Get("passfile"))
		add(u.Query().Get("sslkey"))
	}
	add(os.Getenv("PGPASSFILE"))
	add(os.Getenv("PGSSLKEY"))
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, ".pgpass"))
	}
	return out
}

// printGuard says at start whether tasks are guarded, and what that means
// when they are not.
func printGuard(svc interface{ Guarded() (bool, string) }) {
	if on, why := svc.Guarded(); !on {
		fmt.Fprintf(os.Stderr, "corral serve: warning: tasks are not guarded (%s): a task running as the service's user can read its data directory (the token, the database), and as root its memory; see docs/service.md\n", why)
		return
	}
	fmt.Fprintln(os.Stderr, "corral serve: task guard on: each task has pid, mount and IPC namespaces of its own, the data directory hidden, no device, reduced capabilities")
}
