-- Step 5: the outbox of webhook deliveries, written in the transactions
-- that change an execution, delivered by any worker, in order per
-- execution (or agent) and endpoint.
CREATE TABLE corral_webhook_deliveries (
    id            TEXT PRIMARY KEY,
    stream        TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    execution_id  TEXT NOT NULL,
    agent         TEXT NOT NULL,
    event         TEXT NOT NULL,
    url           TEXT NOT NULL,
    secret        TEXT NOT NULL,
    body          TEXT NOT NULL,
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    next_at       INTEGER NOT NULL,
    locked_until  INTEGER NOT NULL,
    last_status   INTEGER NOT NULL,
    last_error    TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    delivered_at  INTEGER
);
CREATE INDEX corral_webhook_deliveries_due ON corral_webhook_deliveries (status, next_at);
CREATE INDEX corral_webhook_deliveries_stream ON corral_webhook_deliveries (stream, url, seq);
CREATE INDEX corral_webhook_deliveries_execution ON corral_webhook_deliveries (execution_id);
