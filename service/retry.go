package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/internal/mutant"
	"github.com/corralrun/corral/store"
)

// nextAttempt applies the retry policy of agent a to e ending as o: the
// attempt to record after it (Finish makes it, once, in the transaction
// that records o), or nil when the run is over. A rate limit whose reset
// time the provider gave is retried at that time; anything else after the
// policy's jittered backoff.
func nextAttempt(a *corral.Agent, e *corral.Execution, o *corral.Outcome, now time.Time) *store.NextAttempt {
	if a == nil || o.Status == corral.StatusSucceeded || o.Status == corral.StatusCancelled || o.Status == corral.StatusRejected {
		return nil
	}
	limit := a.Retry.Attempts()
	if e.Attempt >= limit || !a.Retry.Retries(o.ErrorType) && !mutant.RetryAll {
		return nil
	}
	next := e.Attempt + 1
	at := now.Add(a.Retry.Backoff(next))
	why := "backoff"
	if o.ErrorType == corral.ErrorRateLimit && o.ResetAt != nil && o.ResetAt.After(now) {
		at, why = o.ResetAt.Add(time.Second), "the provider's reset time"
	}
	n := &store.NextAttempt{At: at,
		Reason: fmt.Sprintf("attempt %d of %d ended %s (%s): %s; attempt %d runs at %s (%s)",
			e.Attempt, limit, o.Status, o.ErrorType, oneLine(o.Error, 200), next, at.UTC().Format(time.RFC3339), why)}
	if a.Retry.Resume && a.Kind == corral.KindHeadless {
		n.ResumeSession = o.SessionID
		if n.ResumeSession == "" {
			n.ResumeSession = e.SessionID
		}
	}
	return n
}

// oneLine returns the first line of s, cut to n bytes.
func oneLine(s string, n int) string {
	for i, c := range s {
		if c == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// admitDue admits the waiting attempts whose time has come, and returns
// when the next one is due (zero for none). Every worker does it; the
// store lets one admit each.
func (s *Service) admitDue(ctx context.Context) time.Time {
	now := s.cfg.Now().UTC()
	due, next, err := s.st.DueAttempts(ctx, now)
	if err != nil {
		return time.Time{}
	}
	for _, id := range due {
		e, err := s.st.AdmitAttempt(ctx, id, now)
		switch {
		case errors.Is(err, store.ErrConflict):
			continue // another worker took it
		case err != nil:
			s.log.Warn("could not admit a retry", "execution", id, "err", err)
			continue
		}
		s.changed()
		s.hub.Notify(e.ID)
		s.metrics.Add(mRetries, 1, nil)
	}
	return next
}

// latestAttempt follows the attempts of the run e belongs to from e on,
// and returns the last one.
func (s *Service) latestAttempt(ctx context.Context, e *corral.Execution) (*corral.Execution, error) {
	for range corral.MaxAttemptsLimit {
		if e.RetriedBy == "" {
			return e, nil
		}
		next, err := s.st.GetExecution(ctx, e.RetriedBy)
		if err != nil {
			return nil, err
		}
		e = next
	}
	return e, nil
}
