-- Step 3: the state of agents' sessions (their CLI's session file), kept
-- between the attempts of a run so that any worker can resume one.
CREATE TABLE corral_session_states (
    session_id  text PRIMARY KEY,
    doc         jsonb NOT NULL,
    data        bytea NOT NULL,
    updated_at  timestamptz NOT NULL
);
CREATE INDEX corral_session_states_updated ON corral_session_states (updated_at);
