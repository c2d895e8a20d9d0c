"""Which method of Client (and AsyncClient) serves each operation of the
API, by its operationId in docs/openapi.yaml. A test compares this table
with the document: an operation without a method fails it."""

OPERATIONS: dict[str, str] = {
    "health": "health",
    "ready": "ready",
    "metrics": "metrics",
    "listAgents": "agents",
    "createAgent": "create_agent",
    "getAgent": "agent",
    "updateAgent": "update_agent",
    "deleteAgent": "delete_agent",
    "submitTask": "submit",
    "getSlots": "slots",
    "getSpend": "spend",
    "listAllSchedules": "schedules",
    "listSchedules": "schedules",
    "createSchedule": "create_schedule",
    "getSchedule": "schedule",
    "updateSchedule": "update_schedule",
    "deleteSchedule": "delete_schedule",
    "triggerSchedule": "trigger",
    "listExecutions": "executions",
    "getExecution": "get",
    "cancelExecution": "cancel",
    "retryExecution": "retry",
    "executionWebhooks": "webhooks",
    "executionEvents": "follow",
}
