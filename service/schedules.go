package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/service/internal/schedule"
	"github.com/corralrun/corral/store"
)

// CreateSchedule validates sc (cron expression, time zone, input, missed
// policy), computes its first fire time and records it. sc.ID is assigned.
func (s *Service) CreateSchedule(ctx context.Context, sc *corral.Schedule) (*corral.Schedule, error) {
	now := s.cfg.Now().UTC()
	sc.ID = "sch_" + store.NewID(now)
	sc.CreatedAt, sc.UpdatedAt = now, now
	sc.LastFireAt, sc.LastExecution = nil, ""
	if err := s.prepareSchedule(sc, now); err != nil {
		return nil, err
	}
	if err := s.st.CreateSchedule(ctx, sc); err != nil {
		return nil, err
	}
	s.wakeScheduler()
	s.changed()
	return sc, nil
}

func (s *Service) prepareSchedule(sc *corral.Schedule, now time.Time) error {
	spec, err := schedule.Parse(sc.Cron, sc.TimeZone)
	if err != nil {
		return invalid("%v", err)
	}
	if d := spec.MinInterval(now); d < s.cfg.MinScheduleInterval {
		return invalid("cron %q fires every %v; this service allows at most one fire every %v", sc.Cron, d, s.cfg.MinScheduleInterval)
	}
	if err := checkInput(sc.Input, sc.Timeout); err != nil {
		return err
	}
	switch sc.Missed {
	case "":
		sc.Missed = corral.MissedSkip
	case corral.MissedSkip, corral.MissedRunOnce:
	default:
		return invalid("missed %q: want \"skip\" or \"run_once\"", sc.Missed)
	}
	sc.NextFireAt = nil
	if sc.Enabled {
		next := spec.Next(now)
		sc.NextFireAt = &next
	}
	return nil
}

// Schedule returns the schedule id.
func (s *Service) Schedule(ctx context.Context, id string) (*corral.Schedule, error) {
	return s.st.GetSchedule(ctx, id)
}

// ScheduleFilter selects schedules; see store.ScheduleFilter.
type ScheduleFilter = store.ScheduleFilter

// Schedules returns a page of schedules, oldest first, and the cursor of
// the next page ("" when this is the last).
func (s *Service) Schedules(ctx context.Context, f ScheduleFilter) ([]*corral.Schedule, string, error) {
	list, next, err := s.st.ListSchedules(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return list, next, err
}

// UpdateSchedule replaces a schedule's cron, time zone, input, timeout,
// enabled flag and missed policy, and computes its next fire time from
// now.
func (s *Service) UpdateSchedule(ctx context.Context, sc *corral.Schedule) (*corral.Schedule, error) {
	old, err := s.st.GetSchedule(ctx, sc.ID)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now().UTC()
	sc.Agent, sc.CreatedAt, sc.UpdatedAt = old.Agent, old.CreatedAt, now
	sc.LastFireAt, sc.LastExecution = old.LastFireAt, old.LastExecution
	if err := s.prepareSchedule(sc, now); err != nil {
		return nil, err
	}
	if err := s.st.UpdateSchedule(ctx, sc); err != nil {
		return nil, err
	}
	s.wakeScheduler()
	s.changed()
	return sc, nil
}

// DeleteSchedule deletes a schedule; its executions are kept.
func (s *Service) DeleteSchedule(ctx context.Context, id string) error {
	err := s.st.DeleteSchedule(ctx, id)
	s.changed()
	return err
}

// TriggerSchedule runs a schedule's task now (trigger "schedule"),
// whether or not it is enabled, without moving its next fire time.
func (s *Service) TriggerSchedule(ctx context.Context, id string) (*corral.Execution, error) {
	sc, err := s.st.GetSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.submit(ctx, &store.Submission{Agent: sc.Agent, Input: sc.Input, Timeout: sc.Timeout, Trigger: corral.TriggerSchedule, ScheduleID: sc.ID}, nil)
}

// releaseEvery is how often a worker looks for queued work that a
// reopened budget window lets start.
const releaseEvery = 5 * time.Second

func (s *Service) wakeScheduler() {
	select {
	case s.wakeSch <- struct{}{}:
	default:
	}
}

// scheduleLoop fires due schedules and admits the retries whose time has
// come. Every worker runs it; the database's compare-and-set on each
// schedule's next fire time, and on each waiting attempt's status, lets
// exactly one worker take each.
func (s *Service) scheduleLoop(ctx context.Context) {
	defer s.sched.Done()
	var lastRelease time.Time
	for {
		if time.Since(lastRelease) >= releaseEvery {
			s.releaseHeld(ctx)
			lastRelease = time.Now()
		}
		wait := time.Second
		if next, ok, err := s.st.NextFire(ctx); err == nil && ok {
			wait = min(wait, max(next.Sub(s.cfg.Now()), 0))
		}
		if next := s.admitDue(ctx); !next.IsZero() {
			wait = min(wait, max(next.Sub(s.cfg.Now()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wakeSch:
		case <-t.C:
		}
		t.Stop()
		s.fireDue(ctx)
	}
}

func (s *Service) fireDue(ctx context.Context) {
	now := s.cfg.Now().UTC()
	due, err := s.st.DueSchedules(ctx, now)
	if err != nil {
		return
	}
	for _, sc := range due {
		spec, err := schedule.Parse(sc.Cron, sc.TimeZone)
		if err != nil {
			s.log.Warn("schedule has become invalid; disabling it", "schedule", sc.ID, "err", err)
			sc.Enabled = false
			s.st.UpdateSchedule(ctx, sc)
			continue
		}
		fire, next := schedule.Decide(spec, *sc.NextFireAt, now, sc.Missed == corral.MissedRunOnce)
		var sub *store.Submission
		var tr submitTrace
		if fire {
			at := *sc.NextFireAt
			sub = &store.Submission{Agent: sc.Agent, Input: sc.Input, Timeout: sc.Timeout, Trigger: corral.TriggerSchedule, ScheduleID: sc.ID, FireAt: &at}
			tr = s.startSubmit(ctx, sub, nil, true) // each fire is a trace of its own
		}
		adm, err := s.st.FireSchedule(ctx, sc.ID, *sc.NextFireAt, next, sub)
		switch {
		case errors.Is(err, store.ErrConflict):
			// Another worker took this fire. Its span is left unended,
			// so never exported: the fire is the other worker's trace.
			continue
		case err != nil:
			s.log.Warn("schedule fire failed", "schedule", sc.ID, "err", err)
			tr.end(nil, err)
			continue
		}
		if adm != nil {
			tr.end(adm.Execution, nil)
		}
		s.changed()
		if adm != nil {
			s.metrics.Add(mScheduleFires, 1, nil)
			if adm.Execution.Status == "rejected" {
				s.metrics.Add(mRejected, 1, nil)
			}
		}
	}
}
