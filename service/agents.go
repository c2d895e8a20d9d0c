package service

import (
	"context"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service/internal/executor"
	"github.com/corralrun/corral/store"
)

// CreateAgent validates a, fills its defaults and records it.
func (s *Service) CreateAgent(ctx context.Context, a *corral.Agent) (*corral.Agent, error) {
	if err := checkAgent(a); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	if err := s.st.CreateAgent(ctx, a); err != nil {
		return nil, err
	}
	s.changed()
	s.refreshEngine(ctx)
	return a, nil
}

// Agent returns the agent name.
func (s *Service) Agent(ctx context.Context, name string) (*corral.Agent, error) {
	return s.st.GetAgent(ctx, name)
}

// Agents returns every agent, by name.
func (s *Service) Agents(ctx context.Context) ([]*corral.Agent, error) {
	list, err := s.st.ListAgents(ctx)
	if list == nil {
		list = []*corral.Agent{}
	}
	return list, err
}

// UpdateAgent replaces the configuration of the agent a.Name, keeping its
// creation time. Raising its capacity starts queued executions at once;
// lowering it lets running ones finish and admits no more until the count
// is under the new capacity.
func (s *Service) UpdateAgent(ctx context.Context, a *corral.Agent) (*corral.Agent, error) {
	old, err := s.st.GetAgent(ctx, a.Name)
	if err != nil {
		return nil, err
	}
	if err := checkAgent(a); err != nil {
		return nil, err
	}
	a.CreatedAt = old.CreatedAt
	a.UpdatedAt = time.Now().UTC()
	if err := s.st.UpdateAgent(ctx, a); err != nil {
		return nil, err
	}
	s.changed()
	s.refreshEngine(ctx)
	return a, nil
}

// DeleteAgent deletes an agent and its schedules; its finished executions
// are kept. It fails with ErrBusy while it has queued or running ones.
func (s *Service) DeleteAgent(ctx context.Context, name string) error {
	err := s.st.DeleteAgent(ctx, name)
	s.changed()
	return err
}

// refreshEngine lets this worker's engine work an agent's new label set at
// once (the others notice on their next heartbeat).
func (s *Service) refreshEngine(ctx context.Context) {
	if err := s.st.Dispatcher().Refresh(ctx); err != nil {
		s.log.Warn("could not look for new agent labels", "err", err)
	}
}

// labelSets returns the distinct label sets of the agents: the job
// engine works the queues of those this worker serves.
func (s *Service) labelSets(ctx context.Context) ([][]string, error) {
	return store.LabelSets(ctx, s.st)
}

// checkAgent validates a and fills its defaults: the agent's own shape,
// then the rules of the layer that runs its tasks.
func checkAgent(a *corral.Agent) error {
	if err := a.Normalize(); err != nil {
		return invalid("%v", err)
	}
	if err := executor.CheckAgent(a); err != nil {
		return invalid("%v", err)
	}
	return nil
}

// Activity returns each agent's activity, by name: slots held,
// executions queued, the outcome of its last recent finished runs, its
// schedules and their next fire. The database counts them; no execution
// record or schedule is read.
func (s *Service) Activity(ctx context.Context, recent int) ([]store.AgentActivity, error) {
	return s.st.Activity(ctx, recent)
}
