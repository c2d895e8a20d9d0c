package service

import (
	"context"
	"time"
)

// RevokeSession records that the web session id is logged out until
// expires, for every worker of the fleet and across restarts.
func (s *Service) RevokeSession(ctx context.Context, id string, expires time.Time) error {
	return s.st.RevokeSession(ctx, id, expires)
}

// SessionRevoked reports whether the web session id was logged out.
func (s *Service) SessionRevoked(ctx context.Context, id string) (bool, error) {
	return s.st.SessionRevoked(ctx, id)
}
