-- corral task service schema, version 1. River's own tables are created by
-- River's migrations beside these.
CREATE TABLE corral_agents (
    name        TEXT PRIMARY KEY,
    doc         TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE corral_executions (
    id               TEXT PRIMARY KEY,
    agent            TEXT NOT NULL,
    status           TEXT NOT NULL,
    worker_id        TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    admitted_at      INTEGER,
    doc              TEXT NOT NULL
);
CREATE INDEX corral_executions_agent_status ON corral_executions (agent, status, created_at, id);
CREATE INDEX corral_executions_status_worker ON corral_executions (status, worker_id);
CREATE INDEX corral_executions_created ON corral_executions (created_at, id);

-- One row per held slot. The primary key makes a slot impossible to hold
-- twice; the unique execution_id makes an execution hold at most one.
CREATE TABLE corral_slots (
    agent        TEXT NOT NULL,
    slot_no      INTEGER NOT NULL,
    execution_id TEXT NOT NULL UNIQUE,
    acquired_at  INTEGER NOT NULL,
    PRIMARY KEY (agent, slot_no)
);

CREATE TABLE corral_schedules (
    id            TEXT PRIMARY KEY,
    agent         TEXT NOT NULL,
    enabled       INTEGER NOT NULL,
    next_fire_at  INTEGER,
    created_at    INTEGER NOT NULL,
    doc           TEXT NOT NULL
);
CREATE INDEX corral_schedules_due ON corral_schedules (enabled, next_fire_at);
CREATE INDEX corral_schedules_agent ON corral_schedules (agent);

CREATE TABLE corral_workers (
    id           TEXT PRIMARY KEY,
    heartbeat_at INTEGER NOT NULL,
    doc          TEXT NOT NULL
);
