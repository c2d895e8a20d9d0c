import type { Agent, AgentFields, DurationLike, Event, Execution, Page, Readiness, Schedule, ScheduleFields, Slots, Spend, WebhookDelivery } from "./types.js";
/** How a Client finds and talks to the service. */
export interface ClientOptions {
    /** HOST:PORT or http(s)://HOST:PORT; default CORRAL_ADDR, else 127.0.0.1:7070. */
    url?: string;
    /** The API token; default CORRAL_TOKEN, else the file "token" of dataDir. */
    token?: string;
    /** The service's data directory, for its token file; default CORRAL_DATA, else $XDG_DATA_HOME/corral, else ~/.local/share/corral. */
    dataDir?: string;
    /** Bound on each call (sending and reading the whole answer), in ms; default 30 000. */
    timeoutMs?: number;
    /** Silence after which an event stream is taken as broken, in ms; default 45 000 (the service sends a keep-alive every 15 s). */
    streamIdleMs?: number;
    /** How long a broken event stream is retried without receiving anything before the follow gives up, in ms; default 60 000. */
    reconnectForMs?: number;
    /** The fetch to use; default globalThis.fetch. */
    fetch?: typeof fetch;
    /** Sees every call before it is sent (tests use it to prove each operation was exercised). */
    observer?: (call: Call) => void;
}
/** The options every call takes. */
export interface CallOptions {
    /** Bound on this call, in ms (overrides the client's). */
    timeoutMs?: number;
    /** Aborts the call (its promise rejects with the signal's reason). */
    signal?: AbortSignal;
}
/** One request: the operation it is (its operationId), method, path, query, JSON body and extra headers. */
export interface Call {
    op: string;
    method: string;
    path: string;
    query?: Record<string, string | number | undefined>;
    body?: unknown;
    headers?: Record<string, string | undefined>;
    accept?: string;
    /** Error statuses that are answers, not errors (503 of /readyz). */
    allow?: number[];
}
/** Filters of a listing of executions. */
export interface ExecutionFilters {
    agent?: string;
    /** One status, or several. */
    status?: string | string[];
    /** On created_at: a Date or an RFC 3339 string. */
    since?: Date | string;
    until?: Date | string;
    /** Executions per page (1–1000). */
    pageSize?: number;
}
/** Options of submit: the run's budget, the W3C trace context, and any other field of the request body. */
export interface SubmitOptions {
    timeout?: DurationLike;
    traceparent?: string;
    tracestate?: string;
    [field: string]: unknown;
}
/** Options of follow and logs. */
export interface FollowOptions {
    /** Start after this log record. */
    after?: number;
    /** Ends the iteration (closing its connection); the iterator then throws the signal's reason. */
    signal?: AbortSignal;
}
/** Options of wait. */
export interface WaitOptions {
    /** Ends the wait (closing its connection); it then rejects with the signal's reason. */
    signal?: AbortSignal;
    /** false: return the end of this attempt, not following the run's retries. */
    followRetries?: boolean;
}
/**
 * A client of one corral service (docs/api.md, docs/openapi.yaml). Every
 * method returns a promise (executions, schedules, follow and logs are
 * async iterators); errors are the classes of this package (APIError
 * subclasses for what the service answered, Unreachable and Timeout
 * otherwise). No connection outlives its call: an iterator's is closed
 * when the iteration ends, breaks, or its signal aborts.
 */
export declare class Client {
    readonly url: string;
    readonly timeoutMs: number;
    readonly streamIdleMs: number;
    readonly reconnectForMs: number;
    private readonly fetchFn;
    private readonly observer;
    private readonly tokenArg;
    private readonly dataDir;
    private token;
    constructor(options?: ClientOptions);
    /** The token the client sends (undefined when it found none). */
    tokenInUse(): Promise<string | undefined>;
    private send;
    private run;
    private events;
    /** GET /healthz: {status: "ok"} while the service serves HTTP. */
    health(opts?: CallOptions): Promise<{
        status: string;
    }>;
    /** GET /readyz: whether the worker can take work (not an error when it cannot). */
    ready(opts?: CallOptions): Promise<Readiness>;
    /** GET /metrics: the Prometheus text. */
    metrics(opts?: CallOptions): Promise<string>;
    /** Every agent, by name. */
    agents(opts?: CallOptions): Promise<Agent[]>;
    /** One agent; NotFound if there is none of that name. */
    agent(name: string, opts?: CallOptions): Promise<Agent>;
    /** Creates an agent of kind "shell" or "headless" with the API's fields (docs/api.md#agents); returns it with its defaults. */
    createAgent(name: string, kind: "shell" | "headless", fields?: AgentFields, opts?: CallOptions): Promise<Agent>;
    /** Changes the given fields of an agent; env merges name by name ({env: {KEY: null}} removes KEY). */
    updateAgent(name: string, fields: AgentFields, opts?: CallOptions): Promise<Agent>;
    /** Deletes an agent and its schedules; Conflict (busy) while it has queued or running executions. */
    deleteAgent(name: string, opts?: CallOptions): Promise<void>;
    /** An agent's capacity and the slots its running executions hold. */
    slots(agent: string, opts?: CallOptions): Promise<Slots>;
    /** What the agent's runs spent in each of its budget windows now (its day's and month's, when its budget bounds them), with their ceilings and when each ends. */
    spend(agent: string, opts?: CallOptions): Promise<Spend>;
    /**
     * Submits a task and returns its execution at once (status "running" or
     * "queued"). `timeout` is the run's budget; `traceparent`/`tracestate`
     * are sent as the W3C trace headers; other fields go into the request
     * body as given. Rejects with AtCapacity when the agent has no free slot
     * and does not queue (or its queue is full), and with BudgetSpent when
     * one of its budget windows is spent (`retryAfter`: the seconds until it
     * reopens); both are Rejected.
     */
    submit(agent: string, input: string, options?: SubmitOptions, opts?: CallOptions): Promise<Execution>;
    /** One execution, whole. */
    get(id: string, opts?: CallOptions): Promise<Execution>;
    /** Cancels an execution: a queued one at once, a running one gracefully (wait for its end). Conflict when it has finished. */
    cancel(id: string, opts?: CallOptions): Promise<Execution>;
    /** Submits a finished execution's task again (trigger "retry"); AtCapacity or BudgetSpent as for submit. */
    retry(id: string, opts?: CallOptions): Promise<Execution>;
    /** The webhook deliveries of the execution's events, oldest first: each one's status, attempts and the receiver's last answer. */
    webhooks(id: string, opts?: CallOptions): Promise<WebhookDelivery[]>;
    /** One page of executions, newest first, as summaries. */
    executionPage(filters?: ExecutionFilters & {
        cursor?: string;
    }, opts?: CallOptions): Promise<Page<Execution>>;
    /** Every execution that matches, newest first, as summaries, fetching page after page as the iteration goes. */
    executions(filters?: ExecutionFilters, opts?: CallOptions): AsyncGenerator<Execution, void, undefined>;
    /**
     * The execution's events: a status event, its log from record after+1,
     * then "end" with the finished execution, where the iteration ends. A
     * stream that breaks (the service restarted, the network failed) is
     * opened again from the last record received, with Last-Event-ID, so
     * each record comes once (with a new status event); after reconnectForMs
     * without receiving anything it throws Unreachable.
     */
    follow(id: string, options?: FollowOptions): AsyncGenerator<Event, void, undefined>;
    /** The execution's log as logged so far, without waiting: status, the records, then "end" (finished) or "replayed" (not yet). */
    logs(id: string, options?: FollowOptions): AsyncGenerator<Event, void, undefined>;
    /**
     * Waits for the run of execution `id` to finish and returns its last
     * attempt: when an attempt ends and its agent retries it (`retried_by`),
     * the wait follows the next attempt, through its backoff, as `corral
     * submit --wait` does; `{followRetries: false}` returns the end of this
     * attempt alone. Rejects with WaitTimeout (holding the attempt as last
     * seen) after timeoutMs for the whole run. Survives a restart of the
     * service like follow.
     */
    wait(id: string, timeoutMs?: number, options?: WaitOptions): Promise<Execution>;
    /** One page of schedules (one agent's, or every agent's), oldest first. */
    schedulePage(agent?: string, page?: {
        pageSize?: number;
        cursor?: string;
    }, opts?: CallOptions): Promise<Page<Schedule>>;
    /** Every schedule of agent (or of every agent), oldest first, fetching page after page. */
    schedules(agent?: string, page?: {
        pageSize?: number;
    }, opts?: CallOptions): AsyncGenerator<Schedule, void, undefined>;
    /** One schedule of agent. */
    schedule(agent: string, id: string, opts?: CallOptions): Promise<Schedule>;
    /** Creates a schedule: cron has five fields, six with seconds, or is a descriptor (@hourly, @every 90s). */
    createSchedule(agent: string, cron: string, input: string, fields?: ScheduleFields, opts?: CallOptions): Promise<Schedule>;
    /** Changes the given fields of a schedule; its next fire is recomputed from now. */
    updateSchedule(agent: string, id: string, fields: ScheduleFields, opts?: CallOptions): Promise<Schedule>;
    /** Deletes a schedule. */
    deleteSchedule(agent: string, id: string, opts?: CallOptions): Promise<void>;
    /** Runs a schedule's task now, enabled or not (trigger "schedule"); AtCapacity or BudgetSpent as for submit. */
    trigger(agent: string, id: string, opts?: CallOptions): Promise<Execution>;
}
