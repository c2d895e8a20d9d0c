"""Each operation of the API as a request and the decoding of its
answer, written once for the blocking and the asyncio clients."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from ._core import Call, fields_body, list_query, seg
from ._types import (Agent, DurationLike, Execution, Page, Readiness, Schedule, Slots, Spend, WebhookDelivery,
                     from_json)

#: A request and the function that turns its decoded JSON answer into
#: what the method returns.
Op = tuple[Call, Callable[[Any], Any]]


def _agent(v: Any) -> Agent:
    return from_json(Agent, v)


def _execution(v: Any) -> Execution:
    return from_json(Execution, v)


def _schedule(v: Any) -> Schedule:
    return from_json(Schedule, v)


def _none(v: Any) -> None:
    return None


def health() -> Op:
    return Call("health", "GET", "/healthz"), lambda v: v


def ready() -> Op:
    def dec(v: Any) -> Readiness:
        return Readiness(ready=v.get("status") == "ready", status=v.get("status", ""), worker=v.get("worker"),
                         reason=v.get("reason"), raw=v)
    return Call("ready", "GET", "/readyz", allow=(503,)), dec


def metrics() -> Op:
    return Call("metrics", "GET", "/metrics", accept="text/plain"), lambda v: v


def agents() -> Op:
    return Call("listAgents", "GET", "/v1/agents"), lambda v: [_agent(a) for a in (v.get("agents") or [])]


def agent(name: str) -> Op:
    return Call("getAgent", "GET", f"/v1/agents/{seg(name)}"), _agent


def create_agent(name: str, kind: str, fields: dict[str, Any]) -> Op:
    body = fields_body({"name": name, "kind": kind, **fields})
    return Call("createAgent", "POST", "/v1/agents", body=body), _agent


def update_agent(name: str, fields: dict[str, Any]) -> Op:
    # None is meaningful in a patch's env (it removes a variable), so
    # fields pass as given.
    return Call("updateAgent", "PATCH", f"/v1/agents/{seg(name)}", body=dict(fields)), _agent


def delete_agent(name: str) -> Op:
    return Call("deleteAgent", "DELETE", f"/v1/agents/{seg(name)}"), _none


def slots(agent: str) -> Op:
    return Call("getSlots", "GET", f"/v1/agents/{seg(agent)}/slots"), lambda v: from_json(Slots, v)


def spend(agent: str) -> Op:
    return Call("getSpend", "GET", f"/v1/agents/{seg(agent)}/spend"), lambda v: from_json(Spend, v)


def submit(agent: str, input: str, timeout: Optional[DurationLike], traceparent: Optional[str],
           tracestate: Optional[str], fields: dict[str, Any]) -> Op:
    if not isinstance(input, str):
        raise TypeError(f"input must be a str (the script or the prompt), not {type(input).__name__}")
    body = fields_body({"input": input, "timeout": timeout, **fields})
    headers = {"traceparent": traceparent or "", "tracestate": tracestate or ""}
    return Call("submitTask", "POST", f"/v1/agents/{seg(agent)}/tasks", body=body, headers=headers), _execution


def get(id: str) -> Op:
    return Call("getExecution", "GET", f"/v1/executions/{seg(id)}"), _execution


def cancel(id: str) -> Op:
    return Call("cancelExecution", "POST", f"/v1/executions/{seg(id)}/cancel"), _execution


def retry(id: str) -> Op:
    return Call("retryExecution", "POST", f"/v1/executions/{seg(id)}/retry"), _execution


def webhooks(id: str) -> Op:
    def dec(v: Any) -> list[WebhookDelivery]:
        return [from_json(WebhookDelivery, d) for d in (v.get("deliveries") or [])]
    return Call("executionWebhooks", "GET", f"/v1/executions/{seg(id)}/webhooks"), dec


def execution_page(agent: Optional[str], status: Union[str, Sequence[str], None], since: Any, until: Any,
                   limit: Optional[int], cursor: Optional[str]) -> Op:
    q = list_query(agent=agent, status=status, since=since, until=until, limit=limit, cursor=cursor)

    def dec(v: Any) -> Page[Execution]:
        return Page([_execution(e) for e in (v.get("executions") or [])], v.get("next_cursor") or "")
    return Call("listExecutions", "GET", "/v1/executions", query=q), dec


def schedule_page(agent: Optional[str], limit: Optional[int], cursor: Optional[str]) -> Op:
    q = list_query(limit=limit, cursor=cursor)

    def dec(v: Any) -> Page[Schedule]:
        return Page([_schedule(s) for s in (v.get("schedules") or [])], v.get("next_cursor") or "")
    if agent:
        return Call("listSchedules", "GET", f"/v1/agents/{seg(agent)}/schedules", query=q), dec
    return Call("listAllSchedules", "GET", "/v1/schedules", query=q), dec


def schedule(agent: str, id: str) -> Op:
    return Call("getSchedule", "GET", f"/v1/agents/{seg(agent)}/schedules/{seg(id)}"), _schedule


def create_schedule(agent: str, cron: str, input: str, fields: dict[str, Any]) -> Op:
    body = fields_body({"cron": cron, "input": input, **fields})
    return Call("createSchedule", "POST", f"/v1/agents/{seg(agent)}/schedules", body=body), _schedule


def update_schedule(agent: str, id: str, fields: dict[str, Any]) -> Op:
    return Call("updateSchedule", "PATCH", f"/v1/agents/{seg(agent)}/schedules/{seg(id)}",
                body=fields_body(fields)), _schedule


def delete_schedule(agent: str, id: str) -> Op:
    return Call("deleteSchedule", "DELETE", f"/v1/agents/{seg(agent)}/schedules/{seg(id)}"), _none


def trigger(agent: str, id: str) -> Op:
    return Call("triggerSchedule", "POST", f"/v1/agents/{seg(agent)}/schedules/{seg(id)}/trigger"), _execution
