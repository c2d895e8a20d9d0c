-- Step 2: web sessions that were logged out, until they would have
-- expired anyway, so that a logout holds across restarts and workers.
CREATE TABLE corral_revoked_sessions (
    id          TEXT PRIMARY KEY,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX corral_revoked_sessions_expiry ON corral_revoked_sessions (expires_at);
