package store

import (
	"context"
	"strings"
)

// Dispatcher is the durable job engine on a store's database (River):
// the transactions of Lifecycle hand it the executions they admit, and
// the service drives it, starting it on each worker with the function
// that runs an execution and stopping it at shutdown. The store never
// runs anything itself.
type Dispatcher interface {
	// Start starts working dispatches on this worker: those of agents
	// whose labels the worker all has (cfg.Labels). It returns once the
	// engine runs.
	Start(ctx context.Context, cfg DispatchConfig) error
	// Refresh makes the engine work the dispatches of agents whose label
	// sets appeared since it started (an agent created or changed through
	// any worker). The service calls it with each heartbeat and after
	// changing an agent.
	Refresh(ctx context.Context) error
	// Stop stops fetching new dispatches at once, waits for the runs in
	// flight to end by themselves until ctx is done, then cancels their
	// context and waits for them to end.
	Stop(ctx context.Context) error
}

// DispatchConfig configures the dispatcher of one worker.
type DispatchConfig struct {
	// WorkerID names this worker in the engine.
	WorkerID string
	// MaxRuns is how many executions this worker runs at once; zero means
	// 256. Slots bound each agent; this bounds the worker.
	MaxRuns int
	// Labels are what this worker advertises: it runs the executions of
	// agents whose labels it all has. Empty means only agents without
	// labels.
	Labels []string
	// LabelSets returns the distinct label sets of the agents; the
	// engine works the queues of those the worker serves.
	LabelSets func(ctx context.Context) ([][]string, error)
	// Run runs one dispatched execution to its end. Its context is
	// cancelled when the engine stops. ErrNotReady makes the engine offer
	// the dispatch again a few seconds later; another error makes it
	// retry later; Claim keeps a retried dispatch from running twice.
	Run func(ctx context.Context, executionID string) error
	// Redispatch hands an execution to the engine again when a run started
	// without a job (one promoted by this worker's own transaction) could
	// not claim it.
	Redispatch func(ctx context.Context, executionID string) error
}

// LabelSets returns the distinct label sets of the agents a holds, the
// queues a dispatcher may work (DispatchConfig.LabelSets).
func LabelSets(ctx context.Context, a Agents) ([][]string, error) {
	agents, err := a.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	var out [][]string
	seen := map[string]bool{}
	for _, ag := range agents {
		key := strings.Join(ag.Labels, "\x00")
		if len(ag.Labels) > 0 && !seen[key] {
			seen[key] = true
			out = append(out, ag.Labels)
		}
	}
	return out, nil
}
