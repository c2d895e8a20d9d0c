//go:build mutation_waitnoretry

// Mutant: wait_execution returns the first attempt's end, not following a retried run to its next attempt.
// Guarantee: MCP service tools: a wait follows a run through its retry attempts
// Caught: ./mcpserver TestServiceWaitFollowsTheRunThroughItsAttempts

package mcpserver

import (
	"context"

	"github.com/corralrun/corral/client"
)

// followRun, mutated for the CI's mutation step (.ci/mutations): it stops
// at the end of the attempt it was given, even when that attempt was
// retried. Built only with the tag mutation_waitnoretry.
func (s *Server) followRun(ctx context.Context, id string, seen func(*client.Execution)) (last *client.Execution, ended []*client.Execution, err error) {
	end, err := s.svc.Client.Follow(ctx, id, pastTheLog, true, func(ev client.Event) error {
		if ev.Execution != nil {
			last = ev.Execution
			seen(ev.Execution)
		}
		return nil
	})
	if err != nil || end == nil {
		return last, ended, err
	}
	return end, []*client.Execution{end}, nil
}
