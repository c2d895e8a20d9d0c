"""The exceptions of the client: what the service answered, or why it
could not be asked. Each message says what to do next."""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Optional

from ._types import Execution, from_json


class CorralError(Exception):
    """Every exception of this package."""


class APIError(CorralError):
    """An error answered by the service: ``status`` (HTTP), ``code`` (the
    service's error code, docs/api.md) and ``message`` (its sentence)."""

    def __init__(self, status: int, code: str, message: str, body: Optional[dict[str, Any]] = None,
                 retry_after: Optional[float] = None):
        self.status = status
        self.code = code
        self.message = message
        self.body = body or {}
        #: seconds the service asked to wait before trying again, when it said
        self.retry_after = retry_after
        super().__init__(self._text())

    def _text(self) -> str:
        return self.message

    def __str__(self) -> str:
        return self._text()


class BadRequest(APIError):
    """400 invalid (also 413 too_large, 415 bad_content_type): the request
    is wrong, and the message, the service's own, says how."""


class Unauthorized(APIError):
    """401: no token, or a wrong one."""

    def _text(self) -> str:
        return (f"{self.message} — pass token=, set CORRAL_TOKEN, or point data_dir= (CORRAL_DATA) "
                "at the service's data directory, whose file 'token' holds it")


class Forbidden(APIError):
    """403 cross_origin or 421 bad_host: the request named the service by a
    host it does not answer to (use a loopback name, an IP address or one of
    its --public-host names), or looked like another origin's."""


class NotFound(APIError):
    """404: no such agent, execution, schedule or route."""


class Conflict(APIError):
    """409: ``code`` says which — exists (the name is taken), busy (the
    agent still has queued or running work: cancel it or wait), conflict
    (the execution is already finished, or not yet), limit (the service
    keeps as many agents, or the agent as many schedules, as it may)."""


class Rejected(APIError):
    """429: the service refused the task and recorded it as a rejected
    execution, ``execution``. Raised as one of its two kinds: AtCapacity
    (no free slot) or BudgetSpent (a budget window is spent); catch
    Rejected for both."""

    execution: Optional[Execution]

    def __init__(self, status: int, code: str, message: str, body: Optional[dict[str, Any]] = None,
                 retry_after: Optional[float] = None):
        ex = (body or {}).get("execution")
        self.execution = from_json(Execution, ex) if isinstance(ex, dict) else None
        super().__init__(status, code, message, body, retry_after)


class AtCapacity(Rejected):
    """429 at_capacity: the agent had no free slot (and no room in its
    queue). ``running``/``capacity`` are the agent's N/N, ``queued``/
    ``max_backlog`` its queue when it queues, ``execution`` the rejected
    execution the service recorded. ``retry_after`` is the service's
    Retry-After when it sends one (it does not today): otherwise retry with
    your own backoff once a run of the agent has finished, or raise its
    max_parallel_tasks, or give it overflow="queue"."""

    running: Optional[int]
    capacity: Optional[int]
    queued: Optional[int]
    max_backlog: Optional[int]

    def __init__(self, status: int, code: str, message: str, body: Optional[dict[str, Any]] = None,
                 retry_after: Optional[float] = None):
        m = re.search(r"\((\d+)/(\d+) parallel", message)
        self.running, self.capacity = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        m = re.search(r"\((\d+)/(\d+) queued", message)
        self.queued, self.max_backlog = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        super().__init__(status, code, message, body, retry_after)

    def _text(self) -> str:
        wait = f"retry in {self.retry_after:g}s" if self.retry_after else "retry once one of its runs has finished"
        return f"{self.message}: {wait}, or raise the agent's max_parallel_tasks, or give it overflow=\"queue\""


class BudgetSpent(Rejected):
    """429 budget_spent: a budget window of the agent (its daily or
    monthly cost or tokens, docs/budgets.md) is spent; the message names
    it and when it reopens. ``retry_after`` is the service's Retry-After:
    the seconds until the window reopens. ``execution`` is the rejected
    execution the service recorded (error type max_budget). Retry then,
    or raise the agent's budget, or give it overflow="queue" (its tasks
    then wait in the queue for the window to reopen)."""

    def _text(self) -> str:
        wait = f"retry in {self.retry_after:g}s" if self.retry_after else "retry once the window reopens"
        return f"{self.message}: {wait}, or raise the agent's budget, or give it overflow=\"queue\""


class LockedOut(APIError):
    """429 locked_out: too many wrong tokens came from this address; wait
    ``retry_after`` seconds (and fix the token)."""


class Unavailable(APIError):
    """503: the service is shutting down (or not ready); retry after its
    restart, or on another worker."""


class ServerError(APIError):
    """500 (or any other status): the service itself failed; its log has
    the cause under the id in the message."""


class Unreachable(CorralError, ConnectionError):
    """The service could not be reached (or the connection broke)."""


class Timeout(CorralError, TimeoutError):
    """A call did not complete within its timeout."""


class WaitTimeout(Timeout):
    """``wait`` ran out of time before the execution finished.
    ``execution`` is the execution as last seen (still running or
    queued): wait again, or cancel it."""

    def __init__(self, message: str, execution: Optional[Execution]):
        self.execution = execution
        super().__init__(message)


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
    413: BadRequest, 415: BadRequest, 421: Forbidden, 503: Unavailable,
}


def error_for(status: int, headers: Mapping[str, str], body: bytes, what: str) -> APIError:
    """Builds the exception for an error answer of the service."""
    data: dict[str, Any] = {}
    try:
        parsed = json.loads(body.decode("utf-8", "replace")) if body else {}
        if isinstance(parsed, dict):
            data = parsed
    except ValueError:
        pass
    err = data.get("error") if isinstance(data.get("error"), dict) else {}
    code = str(err.get("code", ""))
    message = str(err.get("message", "")) or f"corral service answered {status} to {what}: {body[:200].decode('utf-8', 'replace').strip()}"
    retry_after: Optional[float] = None
    ra = headers.get("Retry-After") or headers.get("retry-after")
    if ra:
        try:
            retry_after = float(ra)
        except ValueError:
            pass
    if status == 429:
        cls: type[APIError] = {"locked_out": LockedOut, "budget_spent": BudgetSpent}.get(code, AtCapacity)
    else:
        cls = _BY_STATUS.get(status, ServerError)
    return cls(status, code, message, data, retry_after)
