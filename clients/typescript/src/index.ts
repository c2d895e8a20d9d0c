// @corralrun/client: the TypeScript client of corral's task service
// (docs/api.md, docs/openapi.yaml). No runtime dependencies: fetch and
// web streams (Node 18+, Bun, Deno, browsers where CORS allows).
//
//   import { Client } from "@corralrun/client";
//   const c = new Client();                    // CORRAL_ADDR, CORRAL_TOKEN or the data directory's token
//   const e = await c.submit("coder", "fix the failing test");
//   for await (const ev of c.follow(e.id)) if (ev.type === "log") console.log(ev.text);
//   console.log((await c.wait(e.id)).result);
export { Client } from "./client.js";
export type { Call, CallOptions, ClientOptions, ExecutionFilters, FollowOptions, SubmitOptions, WaitOptions } from "./client.js";
export {
  APIError, AtCapacity, BadRequest, BudgetSpent, Conflict, CorralError, Forbidden, LockedOut, NotFound, Rejected,
  ServerError, Timeout, Unauthorized, Unavailable, Unreachable, WaitTimeout,
} from "./errors.js";
export { OPERATIONS } from "./operations.js";
export { TERMINAL_STATUSES } from "./types.js";
export type {
  Agent, AgentFields, DurationLike, EndEvent, Event, Execution, LogEvent, Page, Readiness, ReplayedEvent, Sandbox,
  SandboxReport, Schedule, ScheduleFields, Slot, Slots, Spend, StatusEvent, Webhook, WebhookDelivery, WebhookEvent,
  WebhookInput, WindowSpend,
} from "./types.js";
