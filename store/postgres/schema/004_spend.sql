-- Step 4: what each agent's runs spent per budget window (a day or a
-- month of the agent's time zone), added to at every usage event by
-- whichever worker runs them.
CREATE TABLE corral_spend (
    agent       text NOT NULL,
    window_key  text NOT NULL,
    cost_usd    double precision NOT NULL,
    tokens      bigint NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (agent, window_key)
);
CREATE INDEX corral_spend_updated ON corral_spend (updated_at);
