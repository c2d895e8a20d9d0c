-- Step 5: the outbox of webhook deliveries, written in the transactions
-- that change an execution, delivered by any worker, in order per
-- execution (or agent) and endpoint.
CREATE TABLE corral_webhook_deliveries (
    id            text PRIMARY KEY,
    stream        text NOT NULL,
    seq           bigint NOT NULL,
    execution_id  text NOT NULL,
    agent         text NOT NULL,
    event         text NOT NULL,
    url           text NOT NULL,
    secret        text NOT NULL,
    body          text NOT NULL,
    status        text NOT NULL,
    attempts      integer NOT NULL,
    next_at       timestamptz NOT NULL,
    locked_until  timestamptz NOT NULL,
    last_status   integer NOT NULL,
    last_error    text NOT NULL,
    created_at    timestamptz NOT NULL,
    delivered_at  timestamptz
);
CREATE INDEX corral_webhook_deliveries_due ON corral_webhook_deliveries (status, next_at);
CREATE INDEX corral_webhook_deliveries_stream ON corral_webhook_deliveries (stream, url, seq);
CREATE INDEX corral_webhook_deliveries_execution ON corral_webhook_deliveries (execution_id);
