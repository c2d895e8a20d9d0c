package web

import (
	"embed"
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/corralrun/corral"
)

//go:embed templates static
var assets embed.FS

// pageNames are the page templates; each is parsed with the layout and
// the shared fragments.
var pageNames = []string{"login", "error", "agents", "agent_form", "task", "executions", "execution", "schedules"}

func parseTemplates(u *UI) (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"dur":        fmtDuration,
		"durMS":      func(ms int64) string { return fmtDuration(time.Duration(ms) * time.Millisecond) },
		"ts":         fmtTime,
		"iso":        func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"rel":        func(t time.Time) string { return fmtRelative(t, u.now()) },
		"deref":      derefTime,
		"clip":       clip,
		"cost":       func(v float64) string { return fmt.Sprintf("$%.4f", v) },
		"pct":        func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) },
		"statusTone": statusTone,
		"bytes":      fmtBytes,
		"add":        func(a, b int) int { return a + b },
		"statuses":   func() []corral.Status { return allStatuses },
		"dict":       dict,
		"sandbox":    sandboxText,
		"sandboxRun": reportText,
		"list":       func(v ...string) []string { return v },
		"tableField": tableField,
	}
	base, err := template.New("base").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/fragments.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{"fragments": base}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(assets, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

var allStatuses = []corral.Status{corral.StatusQueued, corral.StatusWaiting, corral.StatusRunning, corral.StatusSucceeded, corral.StatusFailed, corral.StatusCancelled, corral.StatusRejected, corral.StatusInterrupted}

// statusTone is the CSS class of a status: ok, bad, live or muted.
func statusTone(s corral.Status) string {
	switch s {
	case corral.StatusSucceeded:
		return "ok"
	case corral.StatusFailed, corral.StatusInterrupted:
		return "bad"
	case corral.StatusRunning, corral.StatusQueued, corral.StatusWaiting:
		return "live"
	}
	return "muted"
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// fmtDuration prints a duration for people: 850 ms, 12.3 s, 4m 05s,
// 1h 02m.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "—"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 100*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%.0f days", math.Round(d.Hours()/24))
}

// fmtTime prints a time in UTC; the page's script shows it in the
// reader's time zone.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// fmtRelative says how far t is from now: "in 4m 10s", "12.0 s ago".
func fmtRelative(t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := t.Sub(now)
	if d >= 0 {
		return "in " + fmtDuration(d.Round(time.Second))
	}
	return fmtDuration((-d).Round(time.Second)) + " ago"
}

func fmtBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// clip shortens s to about n characters on one line.
func clip(n int, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// dict builds a map from key, value pairs, for passing several values to
// a template.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}
