// The records of the API (docs/openapi.yaml), with its JSON field names.
// Times are RFC 3339 strings in UTC; durations are the Go strings the
// service writes ("1m30s", "0s"). A field the service does not send is
// absent.

/** The statuses after which an execution never changes again. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["succeeded", "failed", "cancelled", "rejected", "interrupted"]);

/** A duration sent to the service: a Go duration string ("90s", "1h30m") or a number of seconds. */
export type DurationLike = string | number;

/** The confinement an agent asks for its runs (docs/sandbox.md). */
export interface Sandbox {
  mode?: "read-only" | "workspace";
  writable?: string[];
  deny_read?: string[];
  network?: "none" | "host";
  allow_hosts?: string[];
  allow_unix_sockets?: string[];
}

/** What confined a run. */
export interface SandboxReport {
  mode: "read-only" | "workspace";
  network: "none" | "host";
  writable: string[] | null;
  mechanisms: string[] | null;
  landlock_abi?: number;
  denied_hosts?: string[];
}

/** The events a webhook receives (docs/webhooks.md). */
export type WebhookEvent =
  | "queued" | "started" | "succeeded" | "failed" | "cancelled" | "interrupted" | "retrying" | "stalled"
  | "budget_warning" | "budget_exhausted";

/** A webhook as answers show it: its secret is write-only, `secret_set` says it has one. */
export interface Webhook {
  /** An absolute http(s) URL that receives a signed POST per event. */
  url: string;
  secret_set?: boolean;
  /** The events it receives (absent: all). */
  events?: WebhookEvent[];
}

/**
 * A webhook to create or change. `secret` signs the deliveries
 * (Corral-Signature) and is never sent back; a change that sends a
 * webhook back as an answer shows it (without `secret`) keeps the secret
 * of its URL.
 */
export interface WebhookInput {
  url: string;
  secret?: string;
  /** Read-only; may be sent back unchanged. */
  secret_set?: boolean;
  events?: WebhookEvent[];
}

/** An agent: what runs its tasks, its capacity, its budget and its webhooks. */
export interface Agent {
  name: string;
  kind: "shell" | "headless";
  shell?: string;
  command?: string[];
  workdir?: string;
  env_names?: string[];
  pass_env?: string[];
  run_as?: string;
  sandbox?: Sandbox;
  labels?: string[];
  max_parallel_tasks: number;
  overflow: "reject" | "queue";
  max_backlog: number;
  timeout?: string;
  stall_timeout?: string;
  idle_timeout?: string;
  grace?: string;
  max_output?: number;
  /** The retry policy (docs/service.md#retries-and-attempts): attempts per run, the first included. */
  max_attempts?: number;
  /** The error types that are retried. */
  retry_on?: string[];
  /** The wait before the second attempt, doubled for each after, at most retry_max_backoff. */
  retry_backoff?: string;
  retry_max_backoff?: string;
  /** A headless agent's retry continues the session of the attempt before, with resume_prompt. */
  resume?: boolean;
  resume_prompt?: string;
  /** A run's cost ceiling, in USD (docs/budgets.md). */
  max_cost_usd?: number;
  /** A run's token ceiling. */
  max_tokens?: number;
  /** What all the agent's runs may spend in a calendar day; a task once it is spent is refused with BudgetSpent. */
  daily_cost_usd?: number;
  daily_tokens?: number;
  /** The same per calendar month. */
  monthly_cost_usd?: number;
  monthly_tokens?: number;
  /** The IANA zone the budget's days and months are counted in (absent: UTC). */
  budget_time_zone?: string;
  /** What a run in flight does when a window is spent: "stop" (absent) or "finish". */
  budget_overrun?: "stop" | "finish";
  /** The endpoints announced the events of its executions. */
  webhooks?: Webhook[];
  created_at: string;
  updated_at: string;
}

/** The fields of an agent to create or change (env is write-only; in a change, a null value removes a variable). */
export interface AgentFields {
  shell?: string;
  command?: string[];
  workdir?: string;
  env?: Record<string, string | null> | null;
  pass_env?: string[];
  run_as?: string;
  sandbox?: Sandbox;
  labels?: string[];
  max_parallel_tasks?: number;
  overflow?: "reject" | "queue";
  max_backlog?: number;
  timeout?: DurationLike;
  stall_timeout?: DurationLike;
  idle_timeout?: DurationLike;
  grace?: DurationLike;
  max_output?: number;
  max_attempts?: number;
  retry_on?: string[];
  retry_backoff?: DurationLike;
  retry_max_backoff?: DurationLike;
  resume?: boolean;
  resume_prompt?: string;
  max_cost_usd?: number;
  max_tokens?: number;
  daily_cost_usd?: number;
  daily_tokens?: number;
  monthly_cost_usd?: number;
  monthly_tokens?: number;
  budget_time_zone?: string;
  budget_overrun?: "stop" | "finish";
  /** At most 8; each needs its secret when it is new (an agent's answer may be sent back as it is). */
  webhooks?: WebhookInput[];
  [field: string]: unknown;
}

/**
 * One attempt of a task. In listings it is a summary (`summary` true: no
 * stdout, stderr or result; input and error cut); `get` returns it whole.
 *
 * A run is one or more attempts: an attempt that failed and was retried
 * names the next in `retried_by` (which names it in `retry_of`, says why
 * in `retry_reason`, and waits, status "waiting", until
 * `next_attempt_at`). `wait` follows a run to its last attempt.
 */
export interface Execution {
  id: string;
  agent: string;
  trigger: "api" | "schedule" | "retry";
  schedule_id?: string;
  retry_of?: string;
  fire_at?: string;
  attempt: number;
  max_attempts?: number;
  retried_by?: string;
  retry_reason?: string;
  next_attempt_at?: string;
  /** The session of the attempt before that this one continues. */
  resume_session?: string;
  /** The W3C trace context of the run's trace: its submission's span (a service that traces). */
  traceparent?: string;
  tracestate?: string;
  /** The cost of this attempt and those before it. */
  chain_cost_usd?: number;
  input: string;
  timeout?: string;
  status: "queued" | "waiting" | "running" | "succeeded" | "failed" | "cancelled" | "rejected" | "interrupted";
  error_type?: string;
  error?: string;
  exit_code?: number;
  signal?: string;
  result?: string;
  session_id?: string;
  num_turns?: number;
  cost_usd?: number;
  /** cost_usd was priced by corral from the usage: the agent reported no cost. */
  cost_estimated?: boolean;
  usage?: Record<string, unknown>;
  finalized_by?: string;
  /** When the provider said its rate limit resets. */
  reset_at?: string;
  /** Why a resume that was asked for did not take. */
  resume_note?: string;
  stdout?: string;
  stderr?: string;
  stdout_bytes?: number;
  stderr_bytes?: number;
  output_truncated?: boolean;
  log_note?: string;
  containment?: string;
  killed?: number;
  reclaimed?: number;
  /** Processes that could not be killed. */
  survivors?: number;
  sandbox?: SandboxReport;
  user?: string;
  slot?: number;
  worker_id?: string;
  cancel_requested?: boolean;
  created_at: string;
  admitted_at?: string;
  started_at?: string;
  finished_at?: string;
  duration_ms?: number;
  summary?: boolean;
}

/** A cron schedule of an agent's task. */
export interface Schedule {
  id: string;
  agent: string;
  cron: string;
  time_zone: string;
  input: string;
  timeout?: string;
  enabled: boolean;
  missed: "skip" | "run_once";
  next_fire_at?: string;
  last_fire_at?: string;
  last_execution_id?: string;
  created_at: string;
  updated_at: string;
}

/** The fields of a schedule to create or change. */
export interface ScheduleFields {
  cron?: string;
  input?: string;
  time_zone?: string;
  timeout?: DurationLike;
  enabled?: boolean;
  missed?: "skip" | "run_once";
  [field: string]: unknown;
}

/** A capacity slot held by a running execution. */
export interface Slot {
  slot: number;
  execution_id: string;
  since: string;
}

/** An agent's capacity, how much of it is used, and by whom. */
export interface Slots {
  agent: string;
  capacity: number;
  used: number;
  slots: Slot[];
}

/** What an agent's runs spent in one budget window; the next window opens at `end`. */
export interface WindowSpend {
  kind: "daily" | "monthly";
  /** The window's key, the same on every worker ("day:2026-12-01@Europe/Paris"). */
  key: string;
  start: string;
  end: string;
  cost_limit_usd?: number;
  token_limit?: number;
  cost_usd: number;
  tokens: number;
}

/** An agent's budget windows as they stand now (none when its budget bounds no day or month). */
export interface Spend {
  agent: string;
  windows: WindowSpend[];
}

/**
 * One POST of an execution's event to a webhook, delivered at least once:
 * "pending" (tried again at `next_at`), "delivered" or "failed" (given
 * up); `last_status`/`last_error` the receiver's last answer. `id` is the
 * Corral-Delivery header of each of its attempts.
 */
export interface WebhookDelivery {
  id: string;
  execution_id?: string;
  agent: string;
  event: WebhookEvent;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  last_status?: number;
  last_error?: string;
  created_at: string;
  next_at?: string;
  delivered_at?: string;
}

/** The answer of /readyz: `ready` false (not an exception) while the worker cannot take work. */
export interface Readiness {
  ready: boolean;
  status: "ready" | "unavailable";
  worker?: string;
  reason?: string;
}

/** One page of a listing; `next_cursor` continues it ("" at the end). */
export interface Page<T> {
  items: T[];
  next_cursor: string;
}

/** One record of an execution's log: `stream` is stdout, stderr, event (a line of a headless agent's stream) or system. */
export interface LogEvent {
  type: "log";
  seq: number;
  time: string;
  stream: "stdout" | "stderr" | "event" | "system";
  text: string;
}

/** The execution as it stands when a stream (or a resumed stream) opens. */
export interface StatusEvent {
  type: "status";
  execution: Execution;
}

/** The finished execution: the last event of a followed stream. */
export interface EndEvent {
  type: "end";
  execution: Execution;
}

/** The last event of a replay (`logs`) of an unfinished execution. */
export interface ReplayedEvent {
  type: "replayed";
  execution: Execution;
}

export type Event = StatusEvent | LogEvent | EndEvent | ReplayedEvent;
