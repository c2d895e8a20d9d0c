package corral

import (
	"fmt"
	"time"
)

// Budget is what an agent may spend: ceilings per run, enforced from the
// agent's stream as it arrives, and cumulative windows per day and per
// month in the agent's time zone, shared by every worker of a fleet. The
// zero value bounds nothing. Token ceilings serve subscription logins,
// where costs in USD are notional.
type Budget struct {
	// MaxCostUSD and MaxTokens bound one run: a headless turn that crosses
	// one ends at once as max_budget.
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
	MaxTokens  int64   `json:"max_tokens,omitempty"`
	// DailyCostUSD, DailyTokens, MonthlyCostUSD and MonthlyTokens bound
	// what all the agent's runs spend in a calendar day or month of
	// BudgetTimeZone (an IANA name; empty means UTC). Once a window is
	// spent, a new task is refused (HTTP 429, Retry-After at the window's
	// end) or, for an agent that queues, held in the queue until the
	// window opens; a run in flight ends as max_budget at its next usage
	// event, unless BudgetOverrun is "finish".
	DailyCostUSD   float64 `json:"daily_cost_usd,omitempty"`
	DailyTokens    int64   `json:"daily_tokens,omitempty"`
	MonthlyCostUSD float64 `json:"monthly_cost_usd,omitempty"`
	MonthlyTokens  int64   `json:"monthly_tokens,omitempty"`
	BudgetTimeZone string  `json:"budget_time_zone,omitempty"`
	BudgetOverrun  string  `json:"budget_overrun,omitempty"`
}

// What a run in flight does when its agent's window is spent.
const (
	OverrunStop   = "stop"   // it ends at its next usage event (the default)
	OverrunFinish = "finish" // it finishes; new runs wait for the window
)

func (b *Budget) normalize() error {
	for _, v := range []struct {
		name string
		usd  float64
		tok  int64
	}{{"max", b.MaxCostUSD, b.MaxTokens}, {"daily", b.DailyCostUSD, b.DailyTokens}, {"monthly", b.MonthlyCostUSD, b.MonthlyTokens}} {
		if v.usd < 0 || v.tok < 0 {
			return fmt.Errorf("%s_cost_usd and %s_tokens must not be negative", v.name, v.name)
		}
	}
	if _, err := b.location(); err != nil {
		return err
	}
	switch b.BudgetOverrun {
	case "", OverrunStop, OverrunFinish:
	default:
		return fmt.Errorf("budget_overrun %q: want %q or %q", b.BudgetOverrun, OverrunStop, OverrunFinish)
	}
	return nil
}

func (b *Budget) location() (*time.Location, error) {
	if b.BudgetTimeZone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(b.BudgetTimeZone)
	if err != nil {
		return nil, fmt.Errorf("budget_time_zone %q: want an IANA time zone such as Europe/Paris", b.BudgetTimeZone)
	}
	return loc, nil
}

// Window is one budget window of an agent: its key (the same on every
// worker), its span and its ceilings (zero: none of that kind).
type Window struct {
	Kind       string    `json:"kind"` // "daily" or "monthly"
	Key        string    `json:"key"`  // "day:2026-12-01@Europe/Paris"
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	CostLimit  float64   `json:"cost_limit_usd,omitempty"`
	TokenLimit int64     `json:"token_limit,omitempty"`
}

// Windows returns b's windows that bound something, at now.
func (b *Budget) Windows(now time.Time) []Window {
	loc, err := b.location()
	if err != nil {
		loc = time.UTC
	}
	t := now.In(loc)
	var out []Window
	if b.DailyCostUSD > 0 || b.DailyTokens > 0 {
		start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		out = append(out, Window{Kind: "daily", Key: "day:" + start.Format("2006-01-02") + "@" + loc.String(),
			Start: start, End: start.AddDate(0, 0, 1), CostLimit: b.DailyCostUSD, TokenLimit: b.DailyTokens})
	}
	if b.MonthlyCostUSD > 0 || b.MonthlyTokens > 0 {
		start := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
		out = append(out, Window{Kind: "monthly", Key: "month:" + start.Format("2006-01") + "@" + loc.String(),
			Start: start, End: start.AddDate(0, 1, 0), CostLimit: b.MonthlyCostUSD, TokenLimit: b.MonthlyTokens})
	}
	return out
}

// WindowSpend is what an agent's runs spent in one window.
type WindowSpend struct {
	Window
	CostUSD float64 `json:"cost_usd"`
	Tokens  int64   `json:"tokens"`
}

// Spent reports whether w is used up, and says so in words that name the
// budget and when it reopens.
func (w *WindowSpend) Spent() (bool, string) {
	switch {
	case w.CostLimit > 0 && w.CostUSD >= w.CostLimit:
		return true, fmt.Sprintf("its %s cost budget is spent ($%.2f of $%.2f); it reopens at %s", w.Kind, w.CostUSD, w.CostLimit, w.End.Format(time.RFC3339))
	case w.TokenLimit > 0 && w.Tokens >= w.TokenLimit:
		return true, fmt.Sprintf("its %s token budget is spent (%d of %d tokens); it reopens at %s", w.Kind, w.Tokens, w.TokenLimit, w.End.Format(time.RFC3339))
	}
	return false, ""
}

// Used is the larger of the parts of w's ceilings that are used, from 0
// to 1 (and beyond, when overspent).
func (w *WindowSpend) Used() float64 {
	u := 0.0
	if w.CostLimit > 0 {
		u = max(u, w.CostUSD/w.CostLimit)
	}
	if w.TokenLimit > 0 {
		u = max(u, float64(w.Tokens)/float64(w.TokenLimit))
	}
	return u
}
