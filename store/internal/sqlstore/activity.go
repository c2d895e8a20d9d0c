package sqlstore

import (
	"context"
	"sort"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// Activity implements store.Store with a few counting statements, each
// answered from an index: held slots, queued executions and schedules by
// agent, and per agent the statuses of its last finished runs, newest
// first for each finished status (the merge picks the newest overall).
func (s *Store[TTx]) Activity(ctx context.Context, recent int) ([]store.AgentActivity, error) {
	names, err := s.agentNames(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]store.AgentActivity, len(names))
	by := make(map[string]*store.AgentActivity, len(names))
	for i, n := range names {
		out[i].Agent = n
		by[n] = &out[i]
	}
	count := func(q string, set func(a *store.AgentActivity, n int)) error {
		var name string
		var n int
		rows, err := s.db.Read().Query(ctx, q)
		return each(rows, err, func(r Rows) error {
			if err := r.Scan(&name, &n); err != nil {
				return err
			}
			if a := by[name]; a != nil {
				set(a, n)
			}
			return nil
		})
	}
	if err := count(`SELECT agent, count(*) FROM corral_slots GROUP BY agent`, func(a *store.AgentActivity, n int) { a.Running = n }); err != nil {
		return nil, err
	}
	if err := count(`SELECT agent, count(*) FROM corral_executions WHERE status = 'queued' GROUP BY agent`, func(a *store.AgentActivity, n int) { a.Queued = n }); err != nil {
		return nil, err
	}
	var name string
	var n int
	var next *time.Time
	rows, err := s.db.Read().Query(ctx, `SELECT agent, count(*), min(CASE WHEN enabled THEN next_fire_at END) FROM corral_schedules GROUP BY agent`)
	err = each(rows, err, func(r Rows) error {
		if err := r.Scan(&name, &n, &next); err != nil {
			return err
		}
		if a := by[name]; a != nil {
			a.Schedules, a.NextFire = n, next
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if recent <= 0 {
		return out, nil
	}
	for i := range out {
		if err := s.recentOutcomes(ctx, &out[i], recent); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recentOutcomes counts the successes among a's last n finished runs.
func (s *Store[TTx]) recentOutcomes(ctx context.Context, a *store.AgentActivity, n int) error {
	type run struct {
		at time.Time
		id string
		st corral.Status
	}
	one := `SELECT * FROM (SELECT created_at, id, status FROM corral_executions WHERE agent = $1 AND status = `
	tail := ` ORDER BY created_at DESC, id DESC LIMIT $2) `
	rows, err := s.db.Read().Query(ctx, one+`'succeeded'`+tail+`AS s UNION ALL `+one+`'failed'`+tail+`AS f UNION ALL `+one+`'interrupted'`+tail+`AS i`, a.Agent, n)
	runs, err := collect(rows, err, func(r Rows) (run, error) {
		var x run
		var st string
		err := r.Scan(&x.at, &x.id, &st)
		x.st = corral.Status(st)
		return x, err
	})
	if err != nil {
		return err
	}
	sort.Slice(runs, func(i, j int) bool {
		if !runs[i].at.Equal(runs[j].at) {
			return runs[i].at.After(runs[j].at)
		}
		return runs[i].id > runs[j].id
	})
	for _, r := range runs[:min(len(runs), n)] {
		a.Finished++
		if r.st == corral.StatusSucceeded {
			a.Succeeded++
		}
	}
	return nil
}

// agentNames returns the agents' names, in order.
func (s *Store[TTx]) agentNames(ctx context.Context) ([]string, error) {
	rows, err := s.db.Read().Query(ctx, `SELECT name FROM corral_agents ORDER BY name`)
	return collect(rows, err, func(r Rows) (string, error) {
		var n string
		return n, r.Scan(&n)
	})
}
