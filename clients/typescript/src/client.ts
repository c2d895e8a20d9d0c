// The client: every operation of docs/openapi.yaml over fetch, with a
// bound on every call and event streams that resume across a restart of
// the service.
import { findToken, findURL } from "./config.js";
import { APIError, Timeout, Unavailable, Unreachable, WaitTimeout, errorFor } from "./errors.js";
import { SSEParser } from "./sse.js";
import type {
  Agent, AgentFields, DurationLike, Event, Execution, Page, Readiness, Schedule, ScheduleFields, Slots, Spend,
  WebhookDelivery,
} from "./types.js";

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

const PAST_THE_LOG = 2 ** 62;
const USER_AGENT = "corral-client-typescript";

const seg = (s: string): string => {
  if (typeof s !== "string" || s === "") throw new TypeError(`want a non-empty name or id, got ${JSON.stringify(s)}`);
  return encodeURIComponent(s);
};

const time = (t: Date | string | undefined): string | undefined => (t instanceof Date ? t.toISOString() : t);

const defined = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A broken stream: it closed before the execution's end. */
class StreamEnded extends Error {
  constructor() {
    super("the event stream ended before the execution did (the service restarted?)");
  }
}

/** The state of a followed stream across reconnections. */
class Resume {
  last: number;
  execution: Execution | undefined;
  done = false;
  private progress = Date.now();
  private tries = 0;

  constructor(readonly id: string, after: number, readonly live: boolean, readonly reconnectForMs: number, readonly skipLogs = false) {
    this.last = after;
  }

  call(): Call {
    const last = this.skipLogs ? PAST_THE_LOG : this.last;
    return {
      op: "executionEvents", method: "GET", path: `/v1/executions/${seg(this.id)}/events`,
      query: this.live ? {} : { follow: "false" }, headers: last > 0 ? { "Last-Event-ID": String(last) } : {},
      accept: "text/event-stream",
    };
  }

  accept(ev: Event): void {
    this.progress = Date.now();
    this.tries = 0;
    if (ev.type === "log") this.last = ev.seq;
    else {
      this.execution = ev.execution;
      if (ev.type === "end" || ev.type === "replayed") this.done = true;
    }
  }

  /** The pause before opening the stream again; throws Unreachable past reconnectForMs without progress. */
  retryDelay(err: unknown): number {
    if (Date.now() - this.progress > this.reconnectForMs) {
      throw new Unreachable(`event stream of execution ${this.id} broke and could not be opened again for ${this.reconnectForMs} ms (${String(err)}); follow it again with {after: ${this.last}} once the service is back`, { cause: err });
    }
    this.tries++;
    return Math.min(100 * 2 ** this.tries, 2000);
  }

  timeout(): WaitTimeout {
    const state = this.execution ? `still ${this.execution.status}` : "not seen";
    return new WaitTimeout(`execution ${this.id} is ${state} after the wait's timeout: wait again, or cancel it`, this.execution);
  }
}

function retryable(err: unknown): boolean {
  if (err instanceof Unavailable) return true;
  if (err instanceof APIError) return false;
  return err instanceof Unreachable || err instanceof Timeout || err instanceof StreamEnded;
}

function typedEvent(name: string, data: string): Event | undefined {
  const d = JSON.parse(data) as Record<string, unknown>;
  switch (name) {
    case "log":
      return { type: "log", seq: Number(d.seq), time: String(d.time), stream: d.stream as "stdout", text: String(d.text) };
    case "status":
    case "end":
    case "replayed":
      return { type: name, execution: d as unknown as Execution };
  }
  return undefined; // an event of a newer service
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => { signal?.removeEventListener("abort", stop); resolve(); }, ms);
    const stop = (): void => { clearTimeout(t); reject(signal?.reason); };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/**
 * A client of one corral service (docs/api.md, docs/openapi.yaml). Every
 * method returns a promise (executions, schedules, follow and logs are
 * async iterators); errors are the classes of this package (APIError
 * subclasses for what the service answered, Unreachable and Timeout
 * otherwise). No connection outlives its call: an iterator's is closed
 * when the iteration ends, breaks, or its signal aborts.
 */
export class Client {
  readonly url: string;
  readonly timeoutMs: number;
  readonly streamIdleMs: number;
  readonly reconnectForMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly observer: ((call: Call) => void) | undefined;
  private readonly tokenArg: string | undefined;
  private readonly dataDir: string | undefined;
  private token: Promise<string | undefined> | undefined;

  constructor(options: ClientOptions = {}) {
    this.url = findURL(options.url);
    this.tokenArg = options.token;
    this.dataDir = options.dataDir;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.streamIdleMs = options.streamIdleMs ?? 45_000;
    this.reconnectForMs = options.reconnectForMs ?? 60_000;
    this.fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.observer = options.observer;
  }

  /** The token the client sends (undefined when it found none). */
  tokenInUse(): Promise<string | undefined> {
    this.token ??= findToken(this.tokenArg, this.dataDir);
    return this.token;
  }

  // -- transport ------------------------------------------------------------

  private async send(call: Call, signal: AbortSignal): Promise<Response> {
    this.observer?.(call);
    const q = Object.entries(call.query ?? {}).filter(([, v]) => v !== undefined && v !== "");
    const target = this.url + call.path + (q.length ? "?" + new URLSearchParams(q.map(([k, v]) => [k, String(v)])).toString() : "");
    const headers: Record<string, string> = { Accept: call.accept ?? "application/json" };
    if (typeof (globalThis as { window?: unknown }).window === "undefined") headers["User-Agent"] = USER_AGENT;
    let body: string | undefined;
    if (call.method !== "GET" && call.method !== "HEAD") {
      // Even without a body: the service takes no state change that is
      // not JSON, which no web page can send it.
      headers["Content-Type"] = "application/json";
      body = call.body === undefined ? "" : JSON.stringify(call.body);
    }
    const token = await this.tokenInUse();
    if (token) headers.Authorization = "Bearer " + token;
    for (const [k, v] of Object.entries(call.headers ?? {})) if (v) headers[k] = v;
    let resp: Response;
    try {
      resp = await this.fetchFn(target, { method: call.method, headers, body, signal, redirect: "error" });
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      throw new Unreachable(`corral service at ${this.url}: ${describe(e)} (is \`corral serve\` running? pass {url} or set CORRAL_ADDR)`, { cause: e });
    }
    if (resp.status >= 400 && !(call.allow ?? []).includes(resp.status)) {
      throw errorFor(resp.status, resp.headers, await resp.text(), `${call.method} ${call.path}`);
    }
    return resp;
  }

  private async run<T>(call: Call, decode: (v: any) => T, opts: CallOptions = {}): Promise<T> {
    const ms = opts.timeoutMs ?? this.timeoutMs;
    const ctl = new AbortController();
    const expired = new Timeout(`${call.method} ${call.path} to the corral service at ${this.url} did not complete within ${ms} ms: pass a longer {timeoutMs}, or check the service`);
    const timer = setTimeout(() => ctl.abort(expired), ms);
    const stop = (): void => ctl.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", stop, { once: true });
    if (opts.signal?.aborted) stop();
    try {
      const resp = await this.send(call, ctl.signal);
      let text: string;
      try {
        text = await resp.text();
      } catch (e) {
        if (ctl.signal.aborted) throw ctl.signal.reason;
        throw new Unreachable(`corral service at ${this.url}: reading the answer: ${describe(e)}`, { cause: e });
      }
      if ((call.accept ?? "").startsWith("text/plain")) return decode(text);
      return decode(text ? JSON.parse(text) : undefined);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", stop);
    }
  }

  private async *events(st: Resume, deadline?: number, signal?: AbortSignal): AsyncGenerator<Event, void, undefined> {
    for (;;) {
      const ctl = new AbortController();
      const stop = (): void => ctl.abort(signal?.reason);
      signal?.addEventListener("abort", stop, { once: true });
      if (signal?.aborted) stop();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = (ms: number, err: Error): void => {
        clearTimeout(timer);
        if (deadline !== undefined) ms = Math.max(Math.min(ms, deadline - Date.now()), 1);
        timer = setTimeout(() => ctl.abort(err), ms);
      };
      let pause = 0;
      try {
        const call = st.call();
        arm(this.timeoutMs, new Timeout(`the event stream of execution ${st.id} did not open within ${this.timeoutMs} ms`));
        const resp = await this.send(call, ctl.signal);
        if (!resp.body) throw new StreamEnded();
        const reader = resp.body.getReader();
        const text = new TextDecoder();
        const parser = new SSEParser();
        for (;;) {
          arm(this.streamIdleMs, new Timeout(`event stream of execution ${st.id} silent for ${this.streamIdleMs} ms`));
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (e) {
            if (ctl.signal.aborted) throw ctl.signal.reason;
            throw new Unreachable(`event stream of execution ${st.id}: ${describe(e)}`, { cause: e });
          }
          if (chunk.done) throw new StreamEnded();
          for (const raw of parser.feed(text.decode(chunk.value, { stream: true }))) {
            const ev = typedEvent(raw.event, raw.data);
            if (!ev) continue;
            st.accept(ev);
            yield ev;
            if (st.done) return;
          }
        }
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (deadline !== undefined && Date.now() >= deadline) throw st.timeout();
        if (!retryable(e)) throw e;
        pause = st.retryDelay(e);
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener("abort", stop);
        ctl.abort(); // closes the connection
      }
      if (deadline !== undefined) pause = Math.max(Math.min(pause, deadline - Date.now()), 0);
      await sleep(pause, signal);
    }
  }

  // -- health -----------------------------------------------------------------

  /** GET /healthz: {status: "ok"} while the service serves HTTP. */
  health(opts?: CallOptions): Promise<{ status: string }> {
    return this.run({ op: "health", method: "GET", path: "/healthz" }, (v) => v, opts);
  }

  /** GET /readyz: whether the worker can take work (not an error when it cannot). */
  ready(opts?: CallOptions): Promise<Readiness> {
    return this.run({ op: "ready", method: "GET", path: "/readyz", allow: [503] },
      (v) => ({ ...v, ready: v.status === "ready" }), opts);
  }

  /** GET /metrics: the Prometheus text. */
  metrics(opts?: CallOptions): Promise<string> {
    return this.run({ op: "metrics", method: "GET", path: "/metrics", accept: "text/plain" }, (v: string) => v, opts);
  }

  // -- agents -----------------------------------------------------------------

  /** Every agent, by name. */
  agents(opts?: CallOptions): Promise<Agent[]> {
    return this.run({ op: "listAgents", method: "GET", path: "/v1/agents" }, (v) => v.agents ?? [], opts);
  }

  /** One agent; NotFound if there is none of that name. */
  agent(name: string, opts?: CallOptions): Promise<Agent> {
    return this.run({ op: "getAgent", method: "GET", path: `/v1/agents/${seg(name)}` }, (v) => v, opts);
  }

  /** Creates an agent of kind "shell" or "headless" with the API's fields (docs/api.md#agents); returns it with its defaults. */
  createAgent(name: string, kind: "shell" | "headless", fields: AgentFields = {}, opts?: CallOptions): Promise<Agent> {
    return this.run({ op: "createAgent", method: "POST", path: "/v1/agents", body: defined({ name, kind, ...fields }) }, (v) => v, opts);
  }

  /** Changes the given fields of an agent; env merges name by name ({env: {KEY: null}} removes KEY). */
  updateAgent(name: string, fields: AgentFields, opts?: CallOptions): Promise<Agent> {
    return this.run({ op: "updateAgent", method: "PATCH", path: `/v1/agents/${seg(name)}`, body: fields }, (v) => v, opts);
  }

  /** Deletes an agent and its schedules; Conflict (busy) while it has queued or running executions. */
  async deleteAgent(name: string, opts?: CallOptions): Promise<void> {
    await this.run({ op: "deleteAgent", method: "DELETE", path: `/v1/agents/${seg(name)}` }, () => undefined, opts);
  }

  /** An agent's capacity and the slots its running executions hold. */
  slots(agent: string, opts?: CallOptions): Promise<Slots> {
    return this.run({ op: "getSlots", method: "GET", path: `/v1/agents/${seg(agent)}/slots` }, (v) => ({ ...v, slots: v.slots ?? [] }), opts);
  }

  /** What the agent's runs spent in each of its budget windows now (its day's and month's, when its budget bounds them), with their ceilings and when each ends. */
  spend(agent: string, opts?: CallOptions): Promise<Spend> {
    return this.run({ op: "getSpend", method: "GET", path: `/v1/agents/${seg(agent)}/spend` }, (v) => ({ ...v, windows: v.windows ?? [] }), opts);
  }

  // -- tasks and executions ---------------------------------------------------

  /**
   * Submits a task and returns its execution at once (status "running" or
   * "queued"). `timeout` is the run's budget; `traceparent`/`tracestate`
   * are sent as the W3C trace headers; other fields go into the request
   * body as given. Rejects with AtCapacity when the agent has no free slot
   * and does not queue (or its queue is full), and with BudgetSpent when
   * one of its budget windows is spent (`retryAfter`: the seconds until it
   * reopens); both are Rejected.
   */
  submit(agent: string, input: string, options: SubmitOptions = {}, opts?: CallOptions): Promise<Execution> {
    if (typeof input !== "string") throw new TypeError(`input must be a string (the script or the prompt), not ${typeof input}`);
    const { traceparent, tracestate, ...fields } = options;
    return this.run({
      op: "submitTask", method: "POST", path: `/v1/agents/${seg(agent)}/tasks`, body: defined({ input, ...fields }),
      headers: { traceparent, tracestate },
    }, (v) => v, opts);
  }

  /** One execution, whole. */
  get(id: string, opts?: CallOptions): Promise<Execution> {
    return this.run({ op: "getExecution", method: "GET", path: `/v1/executions/${seg(id)}` }, (v) => v, opts);
  }

  /** Cancels an execution: a queued one at once, a running one gracefully (wait for its end). Conflict when it has finished. */
  cancel(id: string, opts?: CallOptions): Promise<Execution> {
    return this.run({ op: "cancelExecution", method: "POST", path: `/v1/executions/${seg(id)}/cancel` }, (v) => v, opts);
  }

  /** Submits a finished execution's task again (trigger "retry"); AtCapacity or BudgetSpent as for submit. */
  retry(id: string, opts?: CallOptions): Promise<Execution> {
    return this.run({ op: "retryExecution", method: "POST", path: `/v1/executions/${seg(id)}/retry` }, (v) => v, opts);
  }

  /** The webhook deliveries of the execution's events, oldest first: each one's status, attempts and the receiver's last answer. */
  webhooks(id: string, opts?: CallOptions): Promise<WebhookDelivery[]> {
    return this.run({ op: "executionWebhooks", method: "GET", path: `/v1/executions/${seg(id)}/webhooks` }, (v) => v.deliveries ?? [], opts);
  }

  /** One page of executions, newest first, as summaries. */
  executionPage(filters: ExecutionFilters & { cursor?: string } = {}, opts?: CallOptions): Promise<Page<Execution>> {
    const status = Array.isArray(filters.status) ? filters.status.join(",") : filters.status;
    return this.run({
      op: "listExecutions", method: "GET", path: "/v1/executions",
      query: { agent: filters.agent, status, since: time(filters.since), until: time(filters.until), limit: filters.pageSize, cursor: filters.cursor },
    }, (v) => ({ items: v.executions ?? [], next_cursor: v.next_cursor ?? "" }), opts);
  }

  /** Every execution that matches, newest first, as summaries, fetching page after page as the iteration goes. */
  async *executions(filters: ExecutionFilters = {}, opts?: CallOptions): AsyncGenerator<Execution, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.executionPage({ ...filters, cursor }, opts);
      yield* page.items;
      if (!page.next_cursor) return;
      cursor = page.next_cursor;
    }
  }

  /**
   * The execution's events: a status event, its log from record after+1,
   * then "end" with the finished execution, where the iteration ends. A
   * stream that breaks (the service restarted, the network failed) is
   * opened again from the last record received, with Last-Event-ID, so
   * each record comes once (with a new status event); after reconnectForMs
   * without receiving anything it throws Unreachable.
   */
  follow(id: string, options: FollowOptions = {}): AsyncGenerator<Event, void, undefined> {
    return this.events(new Resume(id, options.after ?? 0, true, this.reconnectForMs), undefined, options.signal);
  }

  /** The execution's log as logged so far, without waiting: status, the records, then "end" (finished) or "replayed" (not yet). */
  logs(id: string, options: FollowOptions = {}): AsyncGenerator<Event, void, undefined> {
    return this.events(new Resume(id, options.after ?? 0, false, this.reconnectForMs), undefined, options.signal);
  }

  /**
   * Waits for the run of execution `id` to finish and returns its last
   * attempt: when an attempt ends and its agent retries it (`retried_by`),
   * the wait follows the next attempt, through its backoff, as `corral
   * submit --wait` does; `{followRetries: false}` returns the end of this
   * attempt alone. Rejects with WaitTimeout (holding the attempt as last
   * seen) after timeoutMs for the whole run. Survives a restart of the
   * service like follow.
   */
  async wait(id: string, timeoutMs?: number, options: WaitOptions = {}): Promise<Execution> {
    const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (;;) {
      const st = new Resume(id, 0, true, this.reconnectForMs, true);
      let end: Execution | undefined;
      for await (const ev of this.events(st, deadline, options.signal)) {
        if (ev.type === "end") {
          end = ev.execution;
          break;
        }
      }
      if (!end) throw st.timeout();
      if (options.followRetries === false || !end.retried_by) return end;
      id = end.retried_by;
    }
  }

  // -- schedules ----------------------------------------------------------------

  /** One page of schedules (one agent's, or every agent's), oldest first. */
  schedulePage(agent?: string, page: { pageSize?: number; cursor?: string } = {}, opts?: CallOptions): Promise<Page<Schedule>> {
    const query = { limit: page.pageSize, cursor: page.cursor };
    const call: Call = agent
      ? { op: "listSchedules", method: "GET", path: `/v1/agents/${seg(agent)}/schedules`, query }
      : { op: "listAllSchedules", method: "GET", path: "/v1/schedules", query };
    return this.run(call, (v) => ({ items: v.schedules ?? [], next_cursor: v.next_cursor ?? "" }), opts);
  }

  /** Every schedule of agent (or of every agent), oldest first, fetching page after page. */
  async *schedules(agent?: string, page: { pageSize?: number } = {}, opts?: CallOptions): AsyncGenerator<Schedule, void, undefined> {
    let cursor: string | undefined;
    for (;;) {
      const p = await this.schedulePage(agent, { ...page, cursor }, opts);
      yield* p.items;
      if (!p.next_cursor) return;
      cursor = p.next_cursor;
    }
  }

  /** One schedule of agent. */
  schedule(agent: string, id: string, opts?: CallOptions): Promise<Schedule> {
    return this.run({ op: "getSchedule", method: "GET", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}` }, (v) => v, opts);
  }

  /** Creates a schedule: cron has five fields, six with seconds, or is a descriptor (@hourly, @every 90s). */
  createSchedule(agent: string, cron: string, input: string, fields: ScheduleFields = {}, opts?: CallOptions): Promise<Schedule> {
    return this.run({ op: "createSchedule", method: "POST", path: `/v1/agents/${seg(agent)}/schedules`, body: defined({ cron, input, ...fields }) }, (v) => v, opts);
  }

  /** Changes the given fields of a schedule; its next fire is recomputed from now. */
  updateSchedule(agent: string, id: string, fields: ScheduleFields, opts?: CallOptions): Promise<Schedule> {
    return this.run({ op: "updateSchedule", method: "PATCH", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}`, body: defined(fields) }, (v) => v, opts);
  }

  /** Deletes a schedule. */
  async deleteSchedule(agent: string, id: string, opts?: CallOptions): Promise<void> {
    await this.run({ op: "deleteSchedule", method: "DELETE", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}` }, () => undefined, opts);
  }

  /** Runs a schedule's task now, enabled or not (trigger "schedule"); AtCapacity or BudgetSpent as for submit. */
  trigger(agent: string, id: string, opts?: CallOptions): Promise<Execution> {
    return this.run({ op: "triggerSchedule", method: "POST", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}/trigger` }, (v) => v, opts);
  }
}

function describe(e: unknown): string {
  const cause = (e as { cause?: { message?: string; code?: string } })?.cause;
  const msg = e instanceof Error ? e.message : String(e);
  return cause?.code ? `${msg} (${cause.code})` : cause?.message ? `${msg} (${cause.message})` : msg;
}
