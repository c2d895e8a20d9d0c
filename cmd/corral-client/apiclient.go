package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corralrun/corral/client"
)

// Exit statuses of the client commands.
const (
	exitOK          = 0
	exitFailed      = 1  // the task or the request failed
	exitUsage       = 2  // bad flags or arguments
	exitRejected    = 75 // agent at capacity (EX_TEMPFAIL: try again later)
	exitUnavailable = 69 // the service could not be reached (EX_UNAVAILABLE)
)

const clientEnvHelp = `
The service is found at --addr, else CORRAL_ADDR, else 127.0.0.1:7070; the
token is CORRAL_TOKEN, else the token file of --data (default CORRAL_DATA or
~/.local/share/corral), as corral serve made it.
`

// clientFlags are the flags every client command has.
type clientFlags struct {
	addr, data, token string
	json              bool
}

func addClientFlags(fs *flag.FlagSet) *clientFlags {
	c := &clientFlags{}
	addr := os.Getenv("CORRAL_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7070"
	}
	fs.StringVar(&c.addr, "addr", addr, "service address `HOST:PORT` or URL")
	fs.StringVar(&c.data, "data", defaultDataDir(), "data `DIR` of the service, for its token file")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of text")
	return c
}

func (c *clientFlags) client() *client.Client {
	token := strings.TrimSpace(os.Getenv("CORRAL_TOKEN"))
	if token == "" && c.data != "" {
		if b, err := os.ReadFile(filepath.Join(c.data, "token")); err == nil {
			token = strings.TrimSpace(string(b))
		}
	}
	return client.New(c.addr, token)
}

// parseInterleaved parses flags that may come after positional arguments
// too ("corral submit AGENT INPUT --wait"). Everything after a "--" is
// returned in rest, untouched.
func parseInterleaved(fs *flag.FlagSet, args []string) (pos, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, rest, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func printJSON(v any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// apiFail prints err for command name and returns its exit status.
func apiFail(name string, err error) int {
	fmt.Fprintf(os.Stderr, "corral %s: %v\n", name, err)
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests:
		return exitRejected
	case errors.As(err, &ae):
		return exitFailed
	}
	return exitUnavailable
}

func usageError(name, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "corral %s: %s (see corral help %s)\n", name, fmt.Sprintf(format, a...), name)
	return exitUsage
}

func parseError(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

func shortTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("01-02 15:04:05")
}

func durationMS(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Millisecond).String()
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}
