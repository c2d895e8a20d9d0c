package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/corralrun/corral"
	"github.com/corralrun/corral/store"
)

// PutSessionState implements store.Store.
func (s *Store[TTx]) PutSessionState(ctx context.Context, st *corral.SessionState) error {
	if st.SessionID == "" || len(st.SessionID) > 256 {
		return fmt.Errorf("session state: a session id of %d bytes: want 1 to 256", len(st.SessionID))
	}
	if len(st.Data) > corral.MaxSessionState {
		return fmt.Errorf("session state of %s: %d bytes compressed, over the %d kept", st.SessionID, len(st.Data), corral.MaxSessionState)
	}
	doc, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = s.db.Write(ctx, `INSERT INTO corral_session_states (session_id, doc, data, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (session_id) DO UPDATE SET doc = excluded.doc, data = excluded.data, updated_at = excluded.updated_at`,
		st.SessionID, string(doc), st.Data, st.UpdatedAt.UTC())
	return err
}

// GetSessionState implements store.Store.
func (s *Store[TTx]) GetSessionState(ctx context.Context, sessionID string) (*corral.SessionState, error) {
	var doc, data []byte
	err := s.db.Read().QueryRow(ctx, `SELECT doc, data FROM corral_session_states WHERE session_id = $1`, sessionID).Scan(&doc, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session state %q: %w", sessionID, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	st := new(corral.SessionState)
	if err := json.Unmarshal(doc, st); err != nil {
		return nil, fmt.Errorf("session state %q: corrupt record: %w", sessionID, err)
	}
	st.Data = data
	return st, nil
}

// PruneSessionStates implements store.Store.
func (s *Store[TTx]) PruneSessionStates(ctx context.Context, before time.Time) (int, error) {
	n, err := s.db.Write(ctx, `DELETE FROM corral_session_states WHERE updated_at < $1`, before.UTC())
	return int(n), err
}
