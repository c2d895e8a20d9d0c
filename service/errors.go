package service

import (
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"

	"github.com/corralrun/corral/store"
)

// Errors of the service; test them with errors.Is.
var (
	ErrNotFound = store.ErrNotFound
	ErrExists   = store.ErrExists
	ErrConflict = store.ErrConflict
	ErrBusy     = store.ErrBusy
	// ErrLimit means the service keeps as many agents, or an agent as
	// many schedules, as it may.
	ErrLimit = store.ErrLimit
	// ErrInvalid means the request itself is wrong; the message says how.
	ErrInvalid = errors.New("invalid request")
	// ErrAtCapacity means a task was refused because its agent had no free
	// slot (and no room in its backlog); see *RejectedError.
	ErrAtCapacity = errors.New("agent at capacity")
	// ErrBudgetSpent means a task was refused because a budget window of
	// its agent was spent; see *RejectedError.
	ErrBudgetSpent = errors.New("agent budget spent")
	// ErrClosed means the service is shutting down.
	ErrClosed = errors.New("service closed")
)

// RejectedError is returned by Submit for a task refused at admission. The
// rejected execution is recorded and held here. RetryAt is set when the
// agent's budget window was spent (its error type is max_budget): when
// the window reopens.
type RejectedError struct {
	Execution *corral.Execution
	RetryAt   time.Time
}

func (e *RejectedError) Error() string { return e.Execution.Error }
func (e *RejectedError) Unwrap() error {
	if !e.RetryAt.IsZero() {
		return ErrBudgetSpent
	}
	return ErrAtCapacity
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
