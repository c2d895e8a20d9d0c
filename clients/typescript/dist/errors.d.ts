import type { Execution } from "./types.js";
/** Every error of this package. */
export declare class CorralError extends Error {
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/** An error answered by the service: `status` (HTTP), `code` (the service's error code, docs/api.md), `message` (its sentence). */
export declare class APIError extends CorralError {
    readonly status: number;
    readonly code: string;
    /** The service's own sentence (`message` may add what to do). */
    readonly serviceMessage: string;
    readonly body: Record<string, unknown>;
    /** Seconds the service asked to wait before trying again, when it said. */
    readonly retryAfter: number | undefined;
    constructor(status: number, code: string, message: string, body?: Record<string, unknown>, retryAfter?: number, text?: string);
}
/** 400 invalid (also 413 too_large, 415 bad_content_type): the request is wrong; the service's message says how. */
export declare class BadRequest extends APIError {
}
/** 401: no token, or a wrong one. */
export declare class Unauthorized extends APIError {
    constructor(status: number, code: string, message: string, body?: Record<string, unknown>, retryAfter?: number);
}
/** 403 cross_origin or 421 bad_host: name the service by a loopback name, an IP address or one of its --public-host names. */
export declare class Forbidden extends APIError {
}
/** 404: no such agent, execution, schedule or route. */
export declare class NotFound extends APIError {
}
/** 409: `code` says which — exists, busy (cancel or wait for the agent's work), conflict (already finished, or not yet), limit. */
export declare class Conflict extends APIError {
}
/**
 * 429: the service refused the task and recorded it as a rejected
 * execution, `execution`. Thrown as one of its two kinds: AtCapacity (no
 * free slot) or BudgetSpent (a budget window is spent); test for Rejected
 * to catch both.
 */
export declare class Rejected extends APIError {
    readonly execution: Execution | undefined;
    constructor(status: number, code: string, message: string, body?: Record<string, unknown>, retryAfter?: number, text?: string);
}
/**
 * 429 at_capacity: the agent had no free slot (and no room in its queue).
 * `running`/`capacity` are the agent's N/N, `queued`/`maxBacklog` its
 * queue when it queues, `execution` the rejected execution the service
 * recorded. `retryAfter` is the service's Retry-After when it sends one
 * (it does not today): otherwise retry once a run of the agent has
 * finished, or raise its max_parallel_tasks, or give it overflow "queue".
 */
export declare class AtCapacity extends Rejected {
    readonly running: number | undefined;
    readonly capacity: number | undefined;
    readonly queued: number | undefined;
    readonly maxBacklog: number | undefined;
    constructor(status: number, code: string, message: string, body?: Record<string, unknown>, retryAfter?: number);
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
export declare class BudgetSpent extends Rejected {
    constructor(status: number, code: string, message: string, body?: Record<string, unknown>, retryAfter?: number);
}
/** 429 locked_out: too many wrong tokens came from this address; wait `retryAfter` seconds (and fix the token). */
export declare class LockedOut extends APIError {
}
/** 503: the service is shutting down (or not ready); retry after its restart, or on another worker. */
export declare class Unavailable extends APIError {
}
/** 500 (or any other status): the service itself failed; its log has the cause under the id in the message. */
export declare class ServerError extends APIError {
}
/** The service could not be reached (or the connection broke). */
export declare class Unreachable extends CorralError {
}
/** A call did not complete within its timeout. */
export declare class Timeout extends CorralError {
}
/** `wait` ran out of time: `execution` is the execution as last seen (wait again, or cancel it). */
export declare class WaitTimeout extends Timeout {
    readonly execution: Execution | undefined;
    constructor(message: string, execution: Execution | undefined);
}
/** The error for an error answer of the service. */
export declare function errorFor(status: number, headers: Headers, text: string, what: string): APIError;
