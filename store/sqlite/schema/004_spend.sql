-- Step 4: what each agent's runs spent per budget window (a day or a
-- month of the agent's time zone), added to at every usage event by
-- whichever worker runs them.
CREATE TABLE corral_spend (
    agent       TEXT NOT NULL,
    window_key  TEXT NOT NULL,
    cost_usd    REAL NOT NULL,
    tokens      INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (agent, window_key)
);
CREATE INDEX corral_spend_updated ON corral_spend (updated_at);
