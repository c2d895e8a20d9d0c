// The client: every operation of docs/openapi.yaml over fetch, with a
// bound on every call and event streams that resume across a restart of
// the service.
import { findToken, findURL } from "./config.js";
import { APIError, Timeout, Unavailable, Unreachable, WaitTimeout, errorFor } from "./errors.js";
import { SSEParser } from "./sse.js";
const PAST_THE_LOG = 2 ** 62;
const USER_AGENT = "corral-client-typescript";
const seg = (s) => {
    if (typeof s !== "string" || s === "")
        throw new TypeError(`want a non-empty name or id, got ${JSON.stringify(s)}`);
    return encodeURIComponent(s);
};
const time = (t) => (t instanceof Date ? t.toISOString() : t);
const defined = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
/** A broken stream: it closed before the execution's end. */
class StreamEnded extends Error {
    constructor() {
        super("the event stream ended before the execution did (the service restarted?)");
    }
}
/** The state of a followed stream across reconnections. */
class Resume {
    id;
    live;
    reconnectForMs;
    skipLogs;
    last;
    execution;
    done = false;
    progress = Date.now();
    tries = 0;
    constructor(id, after, live, reconnectForMs, skipLogs = false) {
        this.id = id;
        this.live = live;
        this.reconnectForMs = reconnectForMs;
        this.skipLogs = skipLogs;
        this.last = after;
    }
    call() {
        const last = this.skipLogs ? PAST_THE_LOG : this.last;
        return {
            op: "executionEvents", method: "GET", path: `/v1/executions/${seg(this.id)}/events`,
            query: this.live ? {} : { follow: "false" }, headers: last > 0 ? { "Last-Event-ID": String(last) } : {},
            accept: "text/event-stream",
        };
    }
    accept(ev) {
        this.progress = Date.now();
        this.tries = 0;
        if (ev.type === "log")
            this.last = ev.seq;
        else {
            this.execution = ev.execution;
            if (ev.type === "end" || ev.type === "replayed")
                this.done = true;
        }
    }
    /** The pause before opening the stream again; throws Unreachable past reconnectForMs without progress. */
    retryDelay(err) {
        if (Date.now() - this.progress > this.reconnectForMs) {
            throw new Unreachable(`event stream of execution ${this.id} broke and could not be opened again for ${this.reconnectForMs} ms (${String(err)}); follow it again with {after: ${this.last}} once the service is back`, { cause: err });
        }
        this.tries++;
        return Math.min(100 * 2 ** this.tries, 2000);
    }
    timeout() {
        const state = this.execution ? `still ${this.execution.status}` : "not seen";
        return new WaitTimeout(`execution ${this.id} is ${state} after the wait's timeout: wait again, or cancel it`, this.execution);
    }
}
function retryable(err) {
    if (err instanceof Unavailable)
        return true;
    if (err instanceof APIError)
        return false;
    return err instanceof Unreachable || err instanceof Timeout || err instanceof StreamEnded;
}
function typedEvent(name, data) {
    const d = JSON.parse(data);
    switch (name) {
        case "log":
            return { type: "log", seq: Number(d.seq), time: String(d.time), stream: d.stream, text: String(d.text) };
        case "status":
        case "end":
        case "replayed":
            return { type: name, execution: d };
    }
    return undefined; // an event of a newer service
}
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted)
            return reject(signal.reason);
        const t = setTimeout(() => { signal?.removeEventListener("abort", stop); resolve(); }, ms);
        const stop = () => { clearTimeout(t); reject(signal?.reason); };
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
    url;
    timeoutMs;
    streamIdleMs;
    reconnectForMs;
    fetchFn;
    observer;
    tokenArg;
    dataDir;
    token;
    constructor(options = {}) {
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
    tokenInUse() {
        this.token ??= findToken(this.tokenArg, this.dataDir);
        return this.token;
    }
    // -- transport ------------------------------------------------------------
    async send(call, signal) {
        this.observer?.(call);
        const q = Object.entries(call.query ?? {}).filter(([, v]) => v !== undefined && v !== "");
        const target = this.url + call.path + (q.length ? "?" + new URLSearchParams(q.map(([k, v]) => [k, String(v)])).toString() : "");
        const headers = { Accept: call.accept ?? "application/json" };
        if (typeof globalThis.window === "undefined")
            headers["User-Agent"] = USER_AGENT;
        let body;
        if (call.method !== "GET" && call.method !== "HEAD") {
            // Even without a body: the service takes no state change that is
            // not JSON, which no web page can send it.
            headers["Content-Type"] = "application/json";
            body = call.body === undefined ? "" : JSON.stringify(call.body);
        }
        const token = await this.tokenInUse();
        if (token)
            headers.Authorization = "Bearer " + token;
        for (const [k, v] of Object.entries(call.headers ?? {}))
            if (v)
                headers[k] = v;
        let resp;
        try {
            resp = await this.fetchFn(target, { method: call.method, headers, body, signal, redirect: "error" });
        }
        catch (e) {
            if (signal.aborted)
                throw signal.reason;
            throw new Unreachable(`corral service at ${this.url}: ${describe(e)} (is \`corral serve\` running? pass {url} or set CORRAL_ADDR)`, { cause: e });
        }
        if (resp.status >= 400 && !(call.allow ?? []).includes(resp.status)) {
            throw errorFor(resp.status, resp.headers, await resp.text(), `${call.method} ${call.path}`);
        }
        return resp;
    }
    async run(call, decode, opts = {}) {
        const ms = opts.timeoutMs ?? this.timeoutMs;
        const ctl = new AbortController();
        const expired = new Timeout(`${call.method} ${call.path} to the corral service at ${this.url} did not complete within ${ms} ms: pass a longer {timeoutMs}, or check the service`);
        const timer = setTimeout(() => ctl.abort(expired), ms);
        const stop = () => ctl.abort(opts.signal?.reason);
        opts.signal?.addEventListener("abort", stop, { once: true });
        if (opts.signal?.aborted)
            stop();
        try {
            const resp = await this.send(call, ctl.signal);
            let text;
            try {
                text = await resp.text();
            }
            catch (e) {
                if (ctl.signal.aborted)
                    throw ctl.signal.reason;
                throw new Unreachable(`corral service at ${this.url}: reading the answer: ${describe(e)}`, { cause: e });
            }
            if ((call.accept ?? "").startsWith("text/plain"))
                return decode(text);
            return decode(text ? JSON.parse(text) : undefined);
        }
        finally {
            clearTimeout(timer);
            opts.signal?.removeEventListener("abort", stop);
        }
    }
    async *events(st, deadline, signal) {
        for (;;) {
            const ctl = new AbortController();
            const stop = () => ctl.abort(signal?.reason);
            signal?.addEventListener("abort", stop, { once: true });
            if (signal?.aborted)
                stop();
            let timer;
            const arm = (ms, err) => {
                clearTimeout(timer);
                if (deadline !== undefined)
                    ms = Math.max(Math.min(ms, deadline - Date.now()), 1);
                timer = setTimeout(() => ctl.abort(err), ms);
            };
            let pause = 0;
            try {
                const call = st.call();
                arm(this.timeoutMs, new Timeout(`the event stream of execution ${st.id} did not open within ${this.timeoutMs} ms`));
                const resp = await this.send(call, ctl.signal);
                if (!resp.body)
                    throw new StreamEnded();
                const reader = resp.body.getReader();
                const text = new TextDecoder();
                const parser = new SSEParser();
                for (;;) {
                    arm(this.streamIdleMs, new Timeout(`event stream of execution ${st.id} silent for ${this.streamIdleMs} ms`));
                    let chunk;
                    try {
                        chunk = await reader.read();
                    }
                    catch (e) {
                        if (ctl.signal.aborted)
                            throw ctl.signal.reason;
                        throw new Unreachable(`event stream of execution ${st.id}: ${describe(e)}`, { cause: e });
                    }
                    if (chunk.done)
                        throw new StreamEnded();
                    for (const raw of parser.feed(text.decode(chunk.value, { stream: true }))) {
                        const ev = typedEvent(raw.event, raw.data);
                        if (!ev)
                            continue;
                        st.accept(ev);
                        yield ev;
                        if (st.done)
                            return;
                    }
                }
            }
            catch (e) {
                if (signal?.aborted)
                    throw signal.reason;
                if (deadline !== undefined && Date.now() >= deadline)
                    throw st.timeout();
                if (!retryable(e))
                    throw e;
                pause = st.retryDelay(e);
            }
            finally {
                clearTimeout(timer);
                signal?.removeEventListener("abort", stop);
                ctl.abort(); // closes the connection
            }
            if (deadline !== undefined)
                pause = Math.max(Math.min(pause, deadline - Date.now()), 0);
            await sleep(pause, signal);
        }
    }
    // -- health -----------------------------------------------------------------
    /** GET /healthz: {status: "ok"} while the service serves HTTP. */
    health(opts) {
        return this.run({ op: "health", method: "GET", path: "/healthz" }, (v) => v, opts);
    }
    /** GET /readyz: whether the worker can take work (not an error when it cannot). */
    ready(opts) {
        return this.run({ op: "ready", method: "GET", path: "/readyz", allow: [503] }, (v) => ({ ...v, ready: v.status === "ready" }), opts);
    }
    /** GET /metrics: the Prometheus text. */
    metrics(opts) {
        return this.run({ op: "metrics", method: "GET", path: "/metrics", accept: "text/plain" }, (v) => v, opts);
    }
    // -- agents -----------------------------------------------------------------
    /** Every agent, by name. */
    agents(opts) {
        return this.run({ op: "listAgents", method: "GET", path: "/v1/agents" }, (v) => v.agents ?? [], opts);
    }
    /** One agent; NotFound if there is none of that name. */
    agent(name, opts) {
        return this.run({ op: "getAgent", method: "GET", path: `/v1/agents/${seg(name)}` }, (v) => v, opts);
    }
    /** Creates an agent of kind "shell" or "headless" with the API's fields (docs/api.md#agents); returns it with its defaults. */
    createAgent(name, kind, fields = {}, opts) {
        return this.run({ op: "createAgent", method: "POST", path: "/v1/agents", body: defined({ name, kind, ...fields }) }, (v) => v, opts);
    }
    /** Changes the given fields of an agent; env merges name by name ({env: {KEY: null}} removes KEY). */
    updateAgent(name, fields, opts) {
        return this.run({ op: "updateAgent", method: "PATCH", path: `/v1/agents/${seg(name)}`, body: fields }, (v) => v, opts);
    }
    /** Deletes an agent and its schedules; Conflict (busy) while it has queued or running executions. */
    async deleteAgent(name, opts) {
        await this.run({ op: "deleteAgent", method: "DELETE", path: `/v1/agents/${seg(name)}` }, () => undefined, opts);
    }
    /** An agent's capacity and the slots its running executions hold. */
    slots(agent, opts) {
        return this.run({ op: "getSlots", method: "GET", path: `/v1/agents/${seg(agent)}/slots` }, (v) => ({ ...v, slots: v.slots ?? [] }), opts);
    }
    /** What the agent's runs spent in each of its budget windows now (its day's and month's, when its budget bounds them), with their ceilings and when each ends. */
    spend(agent, opts) {
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
    submit(agent, input, options = {}, opts) {
        if (typeof input !== "string")
            throw new TypeError(`input must be a string (the script or the prompt), not ${typeof input}`);
        const { traceparent, tracestate, ...fields } = options;
        return this.run({
            op: "submitTask", method: "POST", path: `/v1/agents/${seg(agent)}/tasks`, body: defined({ input, ...fields }),
            headers: { traceparent, tracestate },
        }, (v) => v, opts);
    }
    /** One execution, whole. */
    get(id, opts) {
        return this.run({ op: "getExecution", method: "GET", path: `/v1/executions/${seg(id)}` }, (v) => v, opts);
    }
    /** Cancels an execution: a queued one at once, a running one gracefully (wait for its end). Conflict when it has finished. */
    cancel(id, opts) {
        return this.run({ op: "cancelExecution", method: "POST", path: `/v1/executions/${seg(id)}/cancel` }, (v) => v, opts);
    }
    /** Submits a finished execution's task again (trigger "retry"); AtCapacity or BudgetSpent as for submit. */
    retry(id, opts) {
        return this.run({ op: "retryExecution", method: "POST", path: `/v1/executions/${seg(id)}/retry` }, (v) => v, opts);
    }
    /** The webhook deliveries of the execution's events, oldest first: each one's status, attempts and the receiver's last answer. */
    webhooks(id, opts) {
        return this.run({ op: "executionWebhooks", method: "GET", path: `/v1/executions/${seg(id)}/webhooks` }, (v) => v.deliveries ?? [], opts);
    }
    /** One page of executions, newest first, as summaries. */
    executionPage(filters = {}, opts) {
        const status = Array.isArray(filters.status) ? filters.status.join(",") : filters.status;
        return this.run({
            op: "listExecutions", method: "GET", path: "/v1/executions",
            query: { agent: filters.agent, status, since: time(filters.since), until: time(filters.until), limit: filters.pageSize, cursor: filters.cursor },
        }, (v) => ({ items: v.executions ?? [], next_cursor: v.next_cursor ?? "" }), opts);
    }
    /** Every execution that matches, newest first, as summaries, fetching page after page as the iteration goes. */
    async *executions(filters = {}, opts) {
        let cursor;
        for (;;) {
            const page = await this.executionPage({ ...filters, cursor }, opts);
            yield* page.items;
            if (!page.next_cursor)
                return;
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
    follow(id, options = {}) {
        return this.events(new Resume(id, options.after ?? 0, true, this.reconnectForMs), undefined, options.signal);
    }
    /** The execution's log as logged so far, without waiting: status, the records, then "end" (finished) or "replayed" (not yet). */
    logs(id, options = {}) {
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
    async wait(id, timeoutMs, options = {}) {
        const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
        for (;;) {
            const st = new Resume(id, 0, true, this.reconnectForMs, true);
            let end;
            for await (const ev of this.events(st, deadline, options.signal)) {
                if (ev.type === "end") {
                    end = ev.execution;
                    break;
                }
            }
            if (!end)
                throw st.timeout();
            if (options.followRetries === false || !end.retried_by)
                return end;
            id = end.retried_by;
        }
    }
    // -- schedules ----------------------------------------------------------------
    /** One page of schedules (one agent's, or every agent's), oldest first. */
    schedulePage(agent, page = {}, opts) {
        const query = { limit: page.pageSize, cursor: page.cursor };
        const call = agent
            ? { op: "listSchedules", method: "GET", path: `/v1/agents/${seg(agent)}/schedules`, query }
            : { op: "listAllSchedules", method: "GET", path: "/v1/schedules", query };
        return this.run(call, (v) => ({ items: v.schedules ?? [], next_cursor: v.next_cursor ?? "" }), opts);
    }
    /** Every schedule of agent (or of every agent), oldest first, fetching page after page. */
    async *schedules(agent, page = {}, opts) {
        let cursor;
        for (;;) {
            const p = await this.schedulePage(agent, { ...page, cursor }, opts);
            yield* p.items;
            if (!p.next_cursor)
                return;
            cursor = p.next_cursor;
        }
    }
    /** One schedule of agent. */
    schedule(agent, id, opts) {
        return this.run({ op: "getSchedule", method: "GET", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}` }, (v) => v, opts);
    }
    /** Creates a schedule: cron has five fields, six with seconds, or is a descriptor (@hourly, @every 90s). */
    createSchedule(agent, cron, input, fields = {}, opts) {
        return this.run({ op: "createSchedule", method: "POST", path: `/v1/agents/${seg(agent)}/schedules`, body: defined({ cron, input, ...fields }) }, (v) => v, opts);
    }
    /** Changes the given fields of a schedule; its next fire is recomputed from now. */
    updateSchedule(agent, id, fields, opts) {
        return this.run({ op: "updateSchedule", method: "PATCH", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}`, body: defined(fields) }, (v) => v, opts);
    }
    /** Deletes a schedule. */
    async deleteSchedule(agent, id, opts) {
        await this.run({ op: "deleteSchedule", method: "DELETE", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}` }, () => undefined, opts);
    }
    /** Runs a schedule's task now, enabled or not (trigger "schedule"); AtCapacity or BudgetSpent as for submit. */
    trigger(agent, id, opts) {
        return this.run({ op: "triggerSchedule", method: "POST", path: `/v1/agents/${seg(agent)}/schedules/${seg(id)}/trigger` }, (v) => v, opts);
    }
}
function describe(e) {
    const cause = e?.cause;
    const msg = e instanceof Error ? e.message : String(e);
    return cause?.code ? `${msg} (${cause.code})` : cause?.message ? `${msg} (${cause.message})` : msg;
}
