// Which method of Client serves each operation of the API, by its
// operationId in docs/openapi.yaml. A test compares this table with the
// document: an operation without a method fails it.

export const OPERATIONS: Readonly<Record<string, string>> = {
  health: "health",
  ready: "ready",
  metrics: "metrics",
  listAgents: "agents",
  createAgent: "createAgent",
  getAgent: "agent",
  updateAgent: "updateAgent",
  deleteAgent: "deleteAgent",
  submitTask: "submit",
  getSlots: "slots",
  getSpend: "spend",
  listAllSchedules: "schedules",
  listSchedules: "schedules",
  createSchedule: "createSchedule",
  getSchedule: "schedule",
  updateSchedule: "updateSchedule",
  deleteSchedule: "deleteSchedule",
  triggerSchedule: "trigger",
  listExecutions: "executions",
  getExecution: "get",
  cancelExecution: "cancel",
  retryExecution: "retry",
  executionWebhooks: "webhooks",
  executionEvents: "follow",
};
