package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/headless"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/service/internal/metrics"
)

// budgetWarnings are the parts of a window, used, at which the service
// warns (its log, the run's log, corral_budget_warnings_total).
var budgetWarnings = []float64{0.8, 0.95}

// runSpend follows what one run of agent a spends, as its headless turn
// reports it after every usage event, and adds it to a's budget windows.
type runSpend struct {
	s    *Service
	a    *corral.Agent
	id   string
	note func(text string) // writes a line to the run's log
	last headless.Spend
}

// spent is the turn's OnSpend: it adds what the run spent since the last
// call to the agent's windows (atomically, shared by the fleet) and to the
// metrics, warns at 80 % and 95 % of a window, and ends the run (an
// error) once a window is spent, unless the agent lets runs in flight
// finish.
func (r *runSpend) spent(sp headless.Spend) error {
	cost, tokens := sp.CostUSD-r.last.CostUSD, sp.Tokens-r.last.Tokens
	r.last = sp
	if cost == 0 && tokens == 0 {
		return nil
	}
	model := ""
	if len(sp.Models) > 0 {
		model = sp.Models[len(sp.Models)-1]
	}
	l := metrics.Labels{"agent", r.a.Name, "model", model}
	r.s.metrics.Add(mCost, cost, l)
	r.s.metrics.Add(mTokens, float64(tokens), l)
	windows := r.a.Budget.Windows(time.Now())
	if len(windows) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	totals, err := r.s.st.AddSpend(ctx, r.a.Name, windows, cost, tokens)
	if err != nil {
		r.s.log.Warn("could not add a run's spend to its agent's budget", "execution", r.id, "err", err)
		return nil // the run goes on; its end records its spend
	}
	for _, w := range totals {
		before := w
		before.CostUSD, before.Tokens = w.CostUSD-cost, w.Tokens-tokens
		for _, level := range budgetWarnings {
			if before.Used() < level && w.Used() >= level {
				msg := fmt.Sprintf("budget: agent %s has used %.0f%% of its %s budget ($%.4f, %d tokens)", r.a.Name, 100*w.Used(), w.Kind, w.CostUSD, w.Tokens)
				r.s.log.Warn(msg, "execution", r.id)
				r.note(msg)
				r.s.metrics.Add(mBudgetWarnings, 1, metrics.Labels{"agent", r.a.Name, "window", w.Kind, "level", fmt.Sprintf("%.0f", 100*level)})
				r.s.budgetEvent(r.a, corral.EventBudgetWarning, w, r.id)
			}
		}
		spent, why := w.Spent()
		if was, _ := before.Spent(); spent && !was {
			r.s.budgetEvent(r.a, corral.EventBudgetExhausted, w, r.id)
		}
		if spent && r.a.BudgetOverrun != corral.OverrunFinish && !mutant.OverrunFinishes {
			return errors.New("agent " + r.a.Name + ": " + why)
		}
	}
	return nil
}

// Spend returns what agent's runs spent in each of its budget windows now.
func (s *Service) Spend(ctx context.Context, agent string) ([]corral.WindowSpend, error) {
	a, err := s.st.GetAgent(ctx, agent)
	if err != nil {
		return nil, err
	}
	ws, err := s.st.WindowSpend(ctx, agent, a.Budget.Windows(s.cfg.Now()))
	if ws == nil {
		ws = []corral.WindowSpend{}
	}
	return ws, err
}

// releaseHeld admits the queued work of agents whose budget window has
// reopened (a new day or month, or a budget raised through another
// worker). Every worker does it; the store's row locks keep it from
// overbooking.
func (s *Service) releaseHeld(ctx context.Context) {
	acts, err := s.st.Activity(ctx, 0)
	if err != nil {
		return
	}
	for _, act := range acts {
		if act.Queued == 0 || act.Running > 0 {
			continue // a release of its own will promote them
		}
		a, err := s.st.GetAgent(ctx, act.Agent)
		if err != nil || len(a.Budget.Windows(s.cfg.Now())) == 0 {
			continue
		}
		if n, err := s.st.PromoteQueued(ctx, a.Name); err == nil && n > 0 {
			s.changed()
		}
	}
}
