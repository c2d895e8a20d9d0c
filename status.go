package corral

import "fmt"

// Status is the state of an execution. Terminal states are written once.
type Status string

const (
	StatusQueued      Status = "queued"      // accepted, waiting for a slot
	StatusWaiting     Status = "waiting"     // a retry, waiting for its time (NextAttemptAt); holds no slot
	StatusRunning     Status = "running"     // holds a slot; its process tree may be alive
	StatusSucceeded   Status = "succeeded"   // finished and judged a success
	StatusFailed      Status = "failed"      // finished and judged a failure; see ErrorType
	StatusCancelled   Status = "cancelled"   // stopped on request; sticky
	StatusRejected    Status = "rejected"    // refused at admission (agent at capacity)
	StatusInterrupted Status = "interrupted" // its supervisor died; found and cleaned up on recovery
)

// Terminal reports whether s is a final state that is never left.
func (s Status) Terminal() bool {
	switch s {
	case StatusSucceeded, StatusFailed, StatusCancelled, StatusRejected, StatusInterrupted:
		return true
	}
	return false
}

// ParseStatus parses a status name.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusQueued, StatusWaiting, StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled, StatusRejected, StatusInterrupted:
		return st, nil
	}
	return "", fmt.Errorf("unknown status %q: want queued, waiting, running, succeeded, failed, cancelled, rejected or interrupted", s)
}

// ErrorType classifies why a run failed. It is a field decided by the layer
// that saw the failure, never inferred from HTTP codes; empty means success.
type ErrorType string

const (
	ErrorNone             ErrorType = ""
	ErrorAuth             ErrorType = "auth"              // credentials missing, invalid or expired
	ErrorRateLimit        ErrorType = "rate_limit"        // the model provider throttled the run or was overloaded: retry later
	ErrorQuota            ErrorType = "quota"             // the account's credit, quota or usage limit is exhausted: retrying will not help until it is raised or resets
	ErrorMaxTurns         ErrorType = "max_turns"         // the agent hit its turn limit
	ErrorMaxBudget        ErrorType = "max_budget"        // the agent hit its spending limit
	ErrorModelUnsupported ErrorType = "model_unsupported" // the requested model does not exist or is not allowed
	ErrorPermissionMode   ErrorType = "permission_mode"   // the required permission mode did not take effect
	ErrorStall            ErrorType = "stall"             // a tool call stayed open past its stall limit
	ErrorIdle             ErrorType = "idle"              // no output past the idle limit
	ErrorTimeout          ErrorType = "timeout"           // the overall budget ran out
	ErrorCancelled        ErrorType = "cancelled"         // stopped on request
	ErrorSignal           ErrorType = "signal"            // killed by a signal nobody in corral sent
	ErrorCrash            ErrorType = "crash"             // non-zero exit with no result
	ErrorEmptyResult      ErrorType = "empty_result"      // exit 0 without a result
	ErrorStream           ErrorType = "stream_error"      // the agent reported an error, or its stream was unusable
	ErrorExit             ErrorType = "exit"              // a command exited non-zero (shell runs)
	ErrorStart            ErrorType = "start"             // the command could not be started
	ErrorInterrupted      ErrorType = "interrupted"       // the supervisor died while the run was in flight
)
