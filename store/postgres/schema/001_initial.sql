-- corral task service schema, version 1, for PostgreSQL. River's own
-- tables are created by River's migrations beside these, in the same
-- schema (the connection's search_path).
CREATE TABLE corral_agents (
    name        text PRIMARY KEY,
    doc         jsonb NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE corral_executions (
    id               text PRIMARY KEY,
    agent            text NOT NULL,
    status           text NOT NULL,
    worker_id        text NOT NULL DEFAULT '',
    cancel_requested boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL,
    admitted_at      timestamptz,
    doc              jsonb NOT NULL
);
CREATE INDEX corral_executions_agent_status ON corral_executions (agent, status, created_at, id);
CREATE INDEX corral_executions_status_worker ON corral_executions (status, worker_id);
CREATE INDEX corral_executions_created ON corral_executions (created_at, id);

-- One row per held slot. The primary key makes a slot impossible to hold
-- twice, whatever the number of workers; the unique execution_id makes an
-- execution hold at most one.
CREATE TABLE corral_slots (
    agent        text NOT NULL,
    slot_no      integer NOT NULL,
    execution_id text NOT NULL UNIQUE,
    acquired_at  timestamptz NOT NULL,
    PRIMARY KEY (agent, slot_no)
);

CREATE TABLE corral_schedules (
    id            text PRIMARY KEY,
    agent         text NOT NULL,
    enabled       boolean NOT NULL,
    next_fire_at  timestamptz,
    created_at    timestamptz NOT NULL,
    doc           jsonb NOT NULL
);
CREATE INDEX corral_schedules_due ON corral_schedules (enabled, next_fire_at);
CREATE INDEX corral_schedules_agent ON corral_schedules (agent);

CREATE TABLE corral_workers (
    id           text PRIMARY KEY,
    heartbeat_at timestamptz NOT NULL,
    doc          jsonb NOT NULL
);
