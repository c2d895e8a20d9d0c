package service

import (
	"context"
	"time"

	"github.com/corralrun/corral"

	"github.com/corralrun/corral/service/internal/runlog"
)

// LogRecord is one record of an execution's log: Seq from 1, Stream
// "stdout", "stderr", "event" (a headless stream line, as JSON text) or
// "system".
type LogRecord = runlog.Record

// Follow replays the log of execution id from record after+1 to fn, as raw
// JSON lines of LogRecord, then follows it live until the execution is
// finished and its log fully sent, and returns the finished execution.
// For a finished run it replays the stored log and returns at once; for
// one that never started (rejected, or cancelled while queued) there is
// nothing to replay. It returns early with ctx's error, or fn's.
func (s *Service) Follow(ctx context.Context, id string, after int, fn func(seq int, rec []byte) error) (*corral.Execution, error) {
	return s.follow(ctx, id, after, true, fn)
}

// Replay is Follow without the following: it sends what is logged now and
// returns the execution as it stands.
func (s *Service) Replay(ctx context.Context, id string, after int, fn func(seq int, rec []byte) error) (*corral.Execution, error) {
	return s.follow(ctx, id, after, false, fn)
}

func (s *Service) follow(ctx context.Context, id string, after int, live bool, fn func(seq int, rec []byte) error) (*corral.Execution, error) {
	e, err := s.st.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	var r *runlog.Reader
	seq := 0
	// send sends what the log holds now, a chunk at a time, and reports
	// whether there was anything.
	send := func() (bool, error) {
		if r == nil && e.LogPath != "" {
			r = runlog.NewReader(e.LogPath)
		}
		if r == nil {
			return false, nil
		}
		any := false
		for {
			recs, err := r.Next()
			if err != nil || len(recs) == 0 {
				return any, err
			}
			any = true
			for _, raw := range recs {
				n := runlog.Seq(raw)
				if n == 0 {
					continue // a line torn by a crash
				}
				seq = n
				if seq <= after {
					continue
				}
				if err := fn(seq, raw); err != nil {
					return any, err
				}
			}
			if err := ctx.Err(); err != nil {
				return any, err
			}
		}
	}
	for {
		changed := s.hub.Changed(id)
		if sent, err := send(); err != nil {
			return e.Execution, err
		} else if sent && live {
			continue // the log grew: read on before looking at the status
		}
		// A run's log is closed before its terminal state is written:
		// seeing the terminal state, one more read gets everything.
		if e, err = s.st.GetRun(ctx, id); err != nil {
			return nil, err
		}
		if e.Status.Terminal() || !live {
			_, err := send()
			return e.Execution, err
		}
		t := time.NewTimer(time.Second) // also catches runs of other workers
		select {
		case <-ctx.Done():
			t.Stop()
			return e.Execution, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}
