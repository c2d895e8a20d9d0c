package corral

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Retry is an agent's retry policy. A run that fails (or is interrupted)
// for a reason its RetryOn names is run again as a new execution, the next
// attempt of the same run, linked to the one before (Execution.RetryOf,
// RetriedBy), after a backoff; it waits for its time (status waiting)
// without holding a slot. The zero value retries nothing.
type Retry struct {
	// MaxAttempts bounds the attempts of a run, the first included; zero
	// means 1 (no retry), at most MaxAttemptsLimit.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// RetryOn lists the error types that are retried; empty means
	// DefaultRetryOn. The types of NeverRetried are refused: retrying them
	// cannot pass.
	RetryOn []ErrorType `json:"retry_on,omitempty"`
	// RetryBackoff is the wait before the second attempt, doubled for each
	// one after, at most RetryMaxBackoff, with up to half of it taken off
	// at random (so that runs that failed together do not retry
	// together); zero means 10 s and 10 min. A rate limit whose reset time
	// the provider gave (Outcome.ResetAt) waits for that instead.
	RetryBackoff    Duration `json:"retry_backoff,omitempty"`
	RetryMaxBackoff Duration `json:"retry_max_backoff,omitempty"`
	// Resume makes the next attempt of a headless run continue the
	// session of the one before (claude --resume, codex exec resume) with
	// ResumePrompt (empty means DefaultResumePrompt), on whichever worker
	// runs it: the session's state is kept by the service between
	// attempts.
	Resume       bool   `json:"resume,omitempty"`
	ResumePrompt string `json:"resume_prompt,omitempty"`
}

// Defaults of a Retry's zero fields.
const (
	DefaultRetryBackoff    = 10 * time.Second
	DefaultRetryMaxBackoff = 10 * time.Minute
	DefaultResumePrompt    = "Continue from where you left off."
	MaxAttemptsLimit       = 100
)

// DefaultRetryOn is what a run is retried for when its agent's RetryOn is
// empty: a worker that died or shut down under it, a provider that
// throttled, shed or broke the stream, a tool call or an agent that hung.
var DefaultRetryOn = []ErrorType{ErrorInterrupted, ErrorRateLimit, ErrorStream, ErrorStall, ErrorIdle}

// NeverRetried are the error types no retry can pass: credentials,
// exhausted quotas and budgets, a permission mode that did not take, and
// a cancellation someone asked for.
var NeverRetried = []ErrorType{ErrorAuth, ErrorQuota, ErrorMaxBudget, ErrorPermissionMode, ErrorCancelled}

func (r *Retry) normalize(kind AgentKind) error {
	if r.MaxAttempts < 0 || r.MaxAttempts > MaxAttemptsLimit {
		return fmt.Errorf("max_attempts %d out of range 1..%d", r.MaxAttempts, MaxAttemptsLimit)
	}
	for _, t := range r.RetryOn {
		if slices.Contains(NeverRetried, t) {
			return fmt.Errorf("retry_on: %s is never retried: a retry cannot pass it", t)
		}
		if !knownErrorType(t) {
			return fmt.Errorf("retry_on: unknown error type %q", t)
		}
	}
	if len(r.RetryOn) == 0 {
		r.RetryOn = nil
	} else {
		slices.Sort(r.RetryOn)
		r.RetryOn = slices.Compact(r.RetryOn)
	}
	if r.RetryBackoff < 0 || r.RetryMaxBackoff < 0 {
		return fmt.Errorf("retry_backoff and retry_max_backoff must not be negative")
	}
	if r.Resume && kind == KindShell {
		return fmt.Errorf("resume: only a headless agent's runs have a session to resume")
	}
	if strings.ContainsRune(r.ResumePrompt, 0) {
		return fmt.Errorf("resume_prompt cannot hold a NUL byte")
	}
	return nil
}

// Retries reports whether a run that failed with error type t may be
// retried under r, attempts aside.
func (r *Retry) Retries(t ErrorType) bool {
	if t == "" || slices.Contains(NeverRetried, t) {
		return false
	}
	on := r.RetryOn
	if len(on) == 0 {
		on = DefaultRetryOn
	}
	return slices.Contains(on, t)
}

// Attempts returns the attempts a run may have under r, at least 1.
func (r *Retry) Attempts() int { return max(r.MaxAttempts, 1) }

// Backoff returns the wait before attempt next (2 for the first retry),
// with its random part: between half of the full backoff and all of it.
func (r *Retry) Backoff(next int) time.Duration {
	base := time.Duration(r.RetryBackoff)
	if base == 0 {
		base = DefaultRetryBackoff
	}
	limit := time.Duration(r.RetryMaxBackoff)
	if limit == 0 {
		limit = DefaultRetryMaxBackoff
	}
	d := base
	for i := 2; i < next && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d/2 + rand.N(d/2+1)
}

// Prompt returns the prompt that resumes a session.
func (r *Retry) Prompt() string {
	if r.ResumePrompt == "" {
		return DefaultResumePrompt
	}
	return r.ResumePrompt
}

func knownErrorType(t ErrorType) bool {
	switch t {
	case ErrorAuth, ErrorRateLimit, ErrorQuota, ErrorMaxTurns, ErrorMaxBudget, ErrorModelUnsupported, ErrorPermissionMode,
		ErrorStall, ErrorIdle, ErrorTimeout, ErrorCancelled, ErrorSignal, ErrorCrash, ErrorEmptyResult, ErrorStream,
		ErrorExit, ErrorStart, ErrorInterrupted:
		return true
	}
	return false
}
