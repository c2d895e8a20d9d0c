package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// maxSessionID bounds the ids RevokeSession keeps.
const maxSessionID = 128

// RevokeSession implements store.Store. Revocations whose session has
// expired are deleted in the same transaction, so the table holds at most
// the sessions logged out within one session lifetime.
func (s *Store[TTx]) RevokeSession(ctx context.Context, id string, expires time.Time) error {
	if id == "" || len(id) > maxSessionID {
		return fmt.Errorf("session id of %d bytes: want 1 to %d", len(id), maxSessionID)
	}
	return s.db.Tx(ctx, func(tx Tx[TTx]) error {
		if _, err := tx.Exec(ctx, `DELETE FROM corral_revoked_sessions WHERE expires_at < $1`, time.Now().UTC()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO corral_revoked_sessions (id, expires_at) VALUES ($1, $2)
			ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`, id, expires.UTC())
		return err
	})
}

// SessionRevoked implements store.Store.
func (s *Store[TTx]) SessionRevoked(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.db.Read().QueryRow(ctx, `SELECT 1 FROM corral_revoked_sessions WHERE id = $1`, id).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
