/** Every error of this package. */
export class CorralError extends Error {
    constructor(message, options) {
        super(message, options);
        this.name = new.target.name;
    }
}
/** An error answered by the service: `status` (HTTP), `code` (the service's error code, docs/api.md), `message` (its sentence). */
export class APIError extends CorralError {
    status;
    code;
    /** The service's own sentence (`message` may add what to do). */
    serviceMessage;
    body;
    /** Seconds the service asked to wait before trying again, when it said. */
    retryAfter;
    constructor(status, code, message, body = {}, retryAfter, text) {
        super(text ?? message);
        this.status = status;
        this.code = code;
        this.serviceMessage = message;
        this.body = body;
        this.retryAfter = retryAfter;
    }
}
/** 400 invalid (also 413 too_large, 415 bad_content_type): the request is wrong; the service's message says how. */
export class BadRequest extends APIError {
}
/** 401: no token, or a wrong one. */
export class Unauthorized extends APIError {
    constructor(status, code, message, body, retryAfter) {
        super(status, code, message, body, retryAfter, `${message} — pass {token}, set CORRAL_TOKEN, or point {dataDir} (CORRAL_DATA) at the service's data directory, whose file 'token' holds it`);
    }
}
/** 403 cross_origin or 421 bad_host: name the service by a loopback name, an IP address or one of its --public-host names. */
export class Forbidden extends APIError {
}
/** 404: no such agent, execution, schedule or route. */
export class NotFound extends APIError {
}
/** 409: `code` says which — exists, busy (cancel or wait for the agent's work), conflict (already finished, or not yet), limit. */
export class Conflict extends APIError {
}
/**
 * 429: the service refused the task and recorded it as a rejected
 * execution, `execution`. Thrown as one of its two kinds: AtCapacity (no
 * free slot) or BudgetSpent (a budget window is spent); test for Rejected
 * to catch both.
 */
export class Rejected extends APIError {
    execution;
    constructor(status, code, message, body = {}, retryAfter, text) {
        super(status, code, message, body, retryAfter, text);
        this.execution = body.execution;
    }
}
/**
 * 429 at_capacity: the agent had no free slot (and no room in its queue).
 * `running`/`capacity` are the agent's N/N, `queued`/`maxBacklog` its
 * queue when it queues, `execution` the rejected execution the service
 * recorded. `retryAfter` is the service's Retry-After when it sends one
 * (it does not today): otherwise retry once a run of the agent has
 * finished, or raise its max_parallel_tasks, or give it overflow "queue".
 */
export class AtCapacity extends Rejected {
    running;
    capacity;
    queued;
    maxBacklog;
    constructor(status, code, message, body = {}, retryAfter) {
        const wait = retryAfter ? `retry in ${retryAfter}s` : "retry once one of its runs has finished";
        super(status, code, message, body, retryAfter, `${message}: ${wait}, or raise the agent's max_parallel_tasks, or give it overflow "queue"`);
        const p = /\((\d+)\/(\d+) parallel/.exec(message);
        this.running = p ? Number(p[1]) : undefined;
        this.capacity = p ? Number(p[2]) : undefined;
        const q = /\((\d+)\/(\d+) queued/.exec(message);
        this.queued = q ? Number(q[1]) : undefined;
        this.maxBacklog = q ? Number(q[2]) : undefined;
    }
}
/**
 * 429 budget_spent: a budget window of the agent (its daily or monthly
 * cost or tokens, docs/budgets.md) is spent; the message names it and when
 * it reopens. `retryAfter` is the service's Retry-After: the seconds until
 * the window reopens. `execution` is the rejected execution the service
 * recorded (error type max_budget). Retry then, or raise the agent's
 * budget, or give it overflow "queue" (its tasks then wait in the queue
 * for the window to reopen).
 */
export class BudgetSpent extends Rejected {
    constructor(status, code, message, body = {}, retryAfter) {
        const wait = retryAfter ? `retry in ${retryAfter}s` : "retry once the window reopens";
        super(status, code, message, body, retryAfter, `${message}: ${wait}, or raise the agent's budget, or give it overflow "queue"`);
    }
}
/** 429 locked_out: too many wrong tokens came from this address; wait `retryAfter` seconds (and fix the token). */
export class LockedOut extends APIError {
}
/** 503: the service is shutting down (or not ready); retry after its restart, or on another worker. */
export class Unavailable extends APIError {
}
/** 500 (or any other status): the service itself failed; its log has the cause under the id in the message. */
export class ServerError extends APIError {
}
/** The service could not be reached (or the connection broke). */
export class Unreachable extends CorralError {
}
/** A call did not complete within its timeout. */
export class Timeout extends CorralError {
}
/** `wait` ran out of time: `execution` is the execution as last seen (wait again, or cancel it). */
export class WaitTimeout extends Timeout {
    execution;
    constructor(message, execution) {
        super(message);
        this.execution = execution;
    }
}
const byStatus = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: BadRequest, 415: BadRequest, 421: Forbidden, 503: Unavailable,
};
/** The 429s that are not AtCapacity, by their code. */
const refusals = new Map([["locked_out", LockedOut], ["budget_spent", BudgetSpent]]);
/** The error for an error answer of the service. */
export function errorFor(status, headers, text, what) {
    let body = {};
    try {
        const v = JSON.parse(text);
        if (v && typeof v === "object")
            body = v;
    }
    catch { /* not JSON: the message says what came */ }
    const err = (body.error && typeof body.error === "object" ? body.error : {});
    const code = String(err.code ?? "");
    const message = String(err.message ?? "") || `corral service answered ${status} to ${what}: ${text.slice(0, 200).trim()}`;
    const ra = headers.get("retry-after");
    const retryAfter = ra && !Number.isNaN(Number(ra)) ? Number(ra) : undefined;
    const cls = status === 429 ? (refusals.get(code) ?? AtCapacity) : (byStatus[status] ?? ServerError);
    return new cls(status, code, message, body, retryAfter);
}
