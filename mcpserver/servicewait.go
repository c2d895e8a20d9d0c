package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/corralrun/corral/client"
	"github.com/corralrun/corral/internal/mutant"
)

// WaitResult is wait_execution's output: the run's last attempt as it
// stands when the wait ended.
type WaitResult struct {
	ExecutionView
	TimedOut bool          `json:"timed_out" jsonschema:"the wait's timeout passed before the run ended; the run goes on: call wait_execution again"`
	WaitedMS int64         `json:"waited_ms"`
	Attempts []AttemptView `json:"attempts,omitempty" jsonschema:"the attempts this wait saw end, in order"`
}

// pastTheLog is a log position after every record: a stream opened after
// it sends the execution's status and its end, no log.
const pastTheLog = 1 << 62

// errStreamEnded is a wait's event stream that ended without its end.
var errStreamEnded = errors.New("the execution's event stream ended before the execution did")

func (s *Server) waitExecution(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (*mcp.CallToolResult, *WaitResult, error) {
	if in.TimeoutMS < 0 || in.MaxOutputChars < 0 {
		return nil, nil, errors.New("timeout_ms and max_output_chars must not be negative")
	}
	if err := checkID(in.ID); err != nil {
		return nil, nil, err
	}
	wait, notes := s.svc.wait(in.TimeoutMS)
	budget, more := s.svc.chars(in.MaxOutputChars)
	notes = append(notes, more...)
	start := time.Now()
	p := startProgress(ctx, req, s.svc.progressEvery())
	follow := ctx
	if mutant.WaitDetached {
		follow = context.WithoutCancel(ctx)
	}
	wctx, cancel := context.WithTimeout(follow, wait)
	last, ended, err := s.followRun(wctx, in.ID, p.saw)
	cancel()
	p.stop()
	if ctx.Err() != nil {
		return s.waitStopped(ctx, last)
	}
	timedOut := err != nil && wctx.Err() != nil
	if err != nil && !timedOut {
		return nil, nil, serviceError("wait_execution", in.ID, err)
	}
	if timedOut || last == nil {
		// Where the run stands now: the stream may have said nothing yet.
		id := in.ID
		if last != nil {
			id = last.ID
		}
		cctx, cancel := s.svc.call(ctx)
		now, err := s.svc.Client.Execution(cctx, id)
		cancel()
		if err != nil {
			return nil, nil, serviceError("wait_execution", id, err)
		}
		last = now
	}
	r := &WaitResult{ExecutionView: executionView(last, budget, false), TimedOut: timedOut, WaitedMS: time.Since(start).Milliseconds()}
	for _, e := range ended {
		r.Attempts = append(r.Attempts, attemptView(e))
	}
	if timedOut {
		notes = append(notes, fmt.Sprintf("the wait timed out after %d ms; %s is still %s: call wait_execution again, or cancel_execution", wait.Milliseconds(), last.ID, last.Status))
	}
	r.Notes = append(notes, r.Notes...)
	return nil, r, nil
}

// waitStopped answers a wait whose call ended: the client cancelled it
// (its answer is dropped) or the server is shutting down, which answers
// with an error result that says the run goes on.
func (s *Server) waitStopped(ctx context.Context, last *client.Execution) (*mcp.CallToolResult, *WaitResult, error) {
	msg := "the wait was cancelled (" + context.Cause(ctx).Error() + ")"
	if errors.Is(context.Cause(ctx), errShuttingDown) {
		msg = errShuttingDown.Error() + ": the wait ended"
	}
	if last != nil && !runFinished(last) {
		msg += fmt.Sprintf("; the run goes on (%s is %s): call wait_execution again with id %s", last.ID, last.Status, last.ID)
	}
	return nil, nil, errors.New(msg)
}
