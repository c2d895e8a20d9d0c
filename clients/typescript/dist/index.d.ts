export { Client } from "./client.js";
export type { Call, CallOptions, ClientOptions, ExecutionFilters, FollowOptions, SubmitOptions, WaitOptions } from "./client.js";
export { APIError, AtCapacity, BadRequest, BudgetSpent, Conflict, CorralError, Forbidden, LockedOut, NotFound, Rejected, ServerError, Timeout, Unauthorized, Unavailable, Unreachable, WaitTimeout, } from "./errors.js";
export { OPERATIONS } from "./operations.js";
export { TERMINAL_STATUSES } from "./types.js";
export type { Agent, AgentFields, DurationLike, EndEvent, Event, Execution, LogEvent, Page, Readiness, ReplayedEvent, Sandbox, SandboxReport, Schedule, ScheduleFields, Slot, Slots, Spend, StatusEvent, Webhook, WebhookDelivery, WebhookEvent, WebhookInput, WindowSpend, } from "./types.js";
