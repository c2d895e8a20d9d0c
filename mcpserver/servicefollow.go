//go:build !mutation_waitnoretry

package mcpserver

import (
	"context"

	"github.com/corralrun/corral/client"
)

// followRun follows the run of execution id to its end through every
// attempt its agent's retry policy makes: when an attempt ends retried,
// it follows the one that retried it. It returns the last attempt seen
// (nil when none was) and the attempts it saw end, in order; it ends with
// ctx's error when ctx ends first. seen is called with each state of an
// attempt the streams report: its status when a stream opens, its end.
func (s *Server) followRun(ctx context.Context, id string, seen func(*client.Execution)) (last *client.Execution, ended []*client.Execution, err error) {
	for {
		end, err := s.svc.Client.Follow(ctx, id, pastTheLog, true, func(ev client.Event) error {
			if ev.Execution != nil {
				last = ev.Execution
				seen(ev.Execution)
			}
			return nil
		})
		switch {
		case err != nil:
			return last, ended, err
		case end == nil:
			return last, ended, errStreamEnded
		}
		last = end
		ended = append(ended, end)
		if end.RetriedBy == "" {
			return last, ended, nil
		}
		id = end.RetriedBy
	}
}
