package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/corralrun/corral/store"
)

// finished is the SQL list of terminal statuses.
const finished = `('succeeded', 'failed', 'cancelled', 'rejected', 'interrupted')`

// PruneExecutions implements store.Store. Candidates are read outside any
// transaction, then deleted one statement each in one short transaction
// that checks again that each is finished, so the writer is held for one
// batch at most.
func (s *Store[TTx]) PruneExecutions(ctx context.Context, p store.Prune) ([]store.Pruned, error) {
	n := p.Limit
	if n <= 0 {
		n = 500
	}
	var cond string
	var args []any
	if !p.Before.IsZero() {
		cond = "created_at < $1"
		args = append(args, p.Before.UTC())
	}
	if p.Keep > 0 {
		// The newest finished execution beyond the ones kept: it and
		// everything older goes.
		var created time.Time
		var id string
		err := s.db.Read().QueryRow(ctx, `SELECT created_at, id FROM corral_executions WHERE status IN `+finished+`
			ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET $1`, p.Keep).Scan(&created, &id)
		switch {
		case err == nil:
			a, b := "$"+strconv.Itoa(len(args)+1), "$"+strconv.Itoa(len(args)+2)
			keep := "(created_at < " + a + " OR (created_at = " + a + " AND id <= " + b + "))"
			if cond == "" {
				cond = keep
			} else {
				cond = "(" + cond + " OR " + keep + ")"
			}
			args = append(args, created, id)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
	}
	if cond == "" {
		return nil, nil
	}
	args = append(args, n)
	rows, err := s.db.Read().Query(ctx, `SELECT id, coalesce(`+s.logPath+`, '') FROM corral_executions
		WHERE status IN `+finished+` AND `+cond+` ORDER BY created_at, id LIMIT $`+strconv.Itoa(len(args)), args...)
	list, err := collect(rows, err, func(r Rows) (store.Pruned, error) {
		var p store.Pruned
		return p, r.Scan(&p.ID, &p.LogPath)
	})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	var out []store.Pruned
	err = s.db.Tx(ctx, func(tx Tx[TTx]) error {
		out = out[:0]
		for _, p := range list {
			n, err := tx.Exec(ctx, `DELETE FROM corral_executions WHERE id = $1 AND status IN `+finished, p.ID)
			if err != nil {
				return err
			}
			if n > 0 {
				out = append(out, p)
			}
		}
		return nil
	})
	return out, err
}
