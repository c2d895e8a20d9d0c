package service

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/corralrun/corral/store"
)

// SessionStateRetention is how long the saved state of a headless session
// is kept after its last attempt saved it: a retry resumes it within its
// backoff, long before.
const SessionStateRetention = 7 * 24 * time.Hour

// pruneBatch is how many executions one sweep deletes per transaction.
const pruneBatch = 500

// sweep deletes the finished executions beyond the retention bounds
// (Config.RetainFor, Config.RetainCount) and their logs, a batch at a
// time, then the logs on this worker's disk older than RetainFor (those
// of records another worker deleted).
func (s *Service) sweep(ctx context.Context) {
	s.st.PruneDeliveries(ctx, time.Now().Add(-webhookKeep))
	s.st.PruneSpend(ctx, time.Now().Add(-400*24*time.Hour))
	if n, err := s.st.PruneSessionStates(ctx, time.Now().Add(-SessionStateRetention)); err == nil && n > 0 {
		s.log.Info("retention: deleted the saved state of sessions idle for too long", "count", n)
	}
	if s.cfg.RetainFor <= 0 && s.cfg.RetainCount <= 0 {
		return
	}
	p := store.Prune{Keep: s.cfg.RetainCount, Limit: pruneBatch}
	if s.cfg.RetainFor > 0 {
		p.Before = time.Now().Add(-s.cfg.RetainFor)
	}
	total := 0
	for ctx.Err() == nil {
		list, err := s.st.PruneExecutions(ctx, p)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("retention sweep failed", "err", err)
			}
			return
		}
		for _, e := range list {
			s.removeLog(e.LogPath)
		}
		total += len(list)
		if len(list) < pruneBatch {
			break
		}
	}
	if total > 0 {
		s.log.Info("retention: deleted finished executions and their logs", "count", total)
		s.changed()
	}
	if s.cfg.RetainFor > 0 {
		s.sweepLogs(p.Before)
	}
}

// removeLog deletes a log of this worker's log directory (execution ids
// are unique, so a path there names only that execution's log, whoever
// recorded it).
func (s *Service) removeLog(path string) {
	if path == "" || filepath.Dir(path) != s.logDir {
		return
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		s.log.Warn("retention: could not delete a log", "path", path, "err", err)
	}
}

// sweepLogs deletes the logs of this worker's directory last written
// before cutoff: their records are older still, so deleted by now.
func (s *Service) sweepLogs(cutoff time.Time) {
	ents, err := os.ReadDir(s.logDir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		id, ok := strings.CutSuffix(ent.Name(), ".jsonl")
		if !ok || s.runsHere(id) {
			continue
		}
		if info, err := ent.Info(); err == nil && info.ModTime().Before(cutoff) {
			s.removeLog(filepath.Join(s.logDir, ent.Name()))
		}
	}
}

// runsHere reports whether this worker runs execution id now.
func (s *Service) runsHere(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id] != nil
}
