package service

import (
	"context"
	"io"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service/internal/metrics"
)

const (
	mFinished        = "corral_executions_finished_total"
	mRejected        = "corral_rejections_total"
	mKilled          = "corral_processes_killed_total"
	mEscapees        = "corral_escapees_killed_total"
	mScheduleFires   = "corral_schedule_fires_total"
	mRetries         = "corral_retries_total"
	mCost            = "corral_cost_usd_total"
	mTokens          = "corral_tokens_total"
	mBudgetWarnings  = "corral_budget_warnings_total"
	mWebhooks        = "corral_webhook_deliveries_total"
	mWebhookFailures = "corral_webhook_failures_total"
	mDuration        = "corral_execution_duration_seconds"
	mAdmission       = "corral_admission_seconds"
	mRelease         = "corral_slot_release_seconds"
)

func newMetrics() *metrics.Registry {
	r := metrics.New()
	r.Counter(mFinished, "Executions that reached a terminal state through this worker, by agent and status.")
	r.Counter(mRejected, "Tasks refused at admission because their agent was at capacity.")
	r.Counter(mKilled, "Processes killed by teardown of runs (timeouts, cancellations, leftovers after the main process exited).")
	r.Counter(mEscapees, "Processes of runs whose worker died, killed by crash recovery.")
	r.Counter(mScheduleFires, "Schedule fires taken by this worker.")
	r.Counter(mRetries, "Retries (next attempts of failed runs) admitted by this worker when their time came.")
	r.Counter(mCost, "Cost of the headless runs of this worker, in USD as they reported it (or estimated from the price table), by agent and model.")
	r.Counter(mTokens, "Tokens of the headless runs of this worker, by agent and model.")
	r.Counter(mWebhooks, "Webhook deliveries this worker made that the receiver accepted.")
	r.Counter(mWebhookFailures, "Webhook delivery attempts of this worker that failed (each is retried with backoff until its time runs out).")
	r.Counter(mBudgetWarnings, "Budget windows that crossed 80 % and 95 % of a ceiling during a run of this worker, by agent, window and level.")
	r.Histogram(mDuration, "Duration of finished runs, by agent.", []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60, 300, 900, 3600})
	// The top buckets (seconds) tell a saturated worker's p99 apart
	// from its timeouts.
	r.Histogram(mAdmission, "Time to take an admission decision (one database transaction).", []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5})
	r.Histogram(mRelease, "Time from a run's process tree being gone to its slot being released.", []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5})
	return r
}

// WriteMetrics writes the service's metrics in the Prometheus text format:
// the counters and histograms of this worker, and gauges read from the
// database (executions by agent and status, slots used and capacity,
// queue depth).
func (s *Service) WriteMetrics(ctx context.Context, w io.Writer) error {
	stats, err := s.st.Stats(ctx)
	if err != nil {
		return err
	}
	byStatus := metrics.GaugeFamily{Name: "corral_executions", Help: "Executions recorded, by agent and status."}
	used := metrics.GaugeFamily{Name: "corral_slots_used", Help: "Slots held by running executions, by agent."}
	capacity := metrics.GaugeFamily{Name: "corral_slots_capacity", Help: "max_parallel_tasks, by agent."}
	queue := metrics.GaugeFamily{Name: "corral_queue_depth", Help: "Queued executions waiting for a slot, by agent."}
	for _, st := range stats {
		l := metrics.Labels{"agent", st.Agent}
		for _, status := range []corral.Status{corral.StatusQueued, corral.StatusWaiting, corral.StatusRunning, corral.StatusSucceeded, corral.StatusFailed, corral.StatusCancelled, corral.StatusRejected, corral.StatusInterrupted} {
			byStatus.Samples = append(byStatus.Samples, metrics.Gauge{Labels: metrics.Labels{"agent", st.Agent, "status", string(status)}, Value: float64(st.ByStatus[status])})
		}
		used.Samples = append(used.Samples, metrics.Gauge{Labels: l, Value: float64(st.SlotsUsed)})
		capacity.Samples = append(capacity.Samples, metrics.Gauge{Labels: l, Value: float64(st.Capacity)})
		queue.Samples = append(queue.Samples, metrics.Gauge{Labels: l, Value: float64(st.ByStatus[corral.StatusQueued])})
	}
	remaining, err := s.budgetGauges(ctx)
	if err != nil {
		return err
	}
	return s.metrics.Write(w, []metrics.GaugeFamily{byStatus, used, capacity, queue, remaining})
}

// budgetGauges reads what is left of each agent's budget windows.
func (s *Service) budgetGauges(ctx context.Context) (metrics.GaugeFamily, error) {
	g := metrics.GaugeFamily{Name: "corral_budget_remaining", Help: "What is left of each agent's budget window, by agent, window (daily, monthly) and unit (usd, tokens); negative when overspent."}
	agents, err := s.st.ListAgents(ctx)
	if err != nil {
		return g, err
	}
	for _, a := range agents {
		windows := a.Budget.Windows(s.cfg.Now())
		if len(windows) == 0 {
			continue
		}
		spends, err := s.st.WindowSpend(ctx, a.Name, windows)
		if err != nil {
			return g, err
		}
		for _, w := range spends {
			if w.CostLimit > 0 {
				g.Samples = append(g.Samples, metrics.Gauge{Labels: metrics.Labels{"agent", a.Name, "window", w.Kind, "unit", "usd"}, Value: w.CostLimit - w.CostUSD})
			}
			if w.TokenLimit > 0 {
				g.Samples = append(g.Samples, metrics.Gauge{Labels: metrics.Labels{"agent", a.Name, "window", w.Kind, "unit", "tokens"}, Value: float64(w.TokenLimit - w.Tokens)})
			}
		}
	}
	return g, nil
}
