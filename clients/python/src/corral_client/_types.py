"""The records of the API, as typed dataclasses.

Field names are the API's JSON names (docs/openapi.yaml). Times are
timezone-aware datetimes in UTC; durations stay the Go strings the
service writes ("1m30s", "0s"). A field the service does not send is None.
Every record keeps the JSON it was read from in ``raw``, so fields a newer
service adds are not lost.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar, Optional, Union

#: The statuses after which an execution never changes again.
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "cancelled", "rejected", "interrupted"})

_TIME = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$")


def parse_time(s: str) -> datetime:
    """Parses an RFC 3339 time as the service writes it (nanoseconds are
    cut to microseconds) into an aware datetime."""
    m = _TIME.match(s)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {s!r}")
    base, frac, tz = m.groups()
    t = datetime.strptime(base, "%Y-%m-%dT%H:%M:%S")
    if frac:
        t = t.replace(microsecond=int(frac[:6].ljust(6, "0")))
    if tz == "Z":
        return t.replace(tzinfo=timezone.utc)
    sign = 1 if tz[0] == "+" else -1
    off = timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
    return t.replace(tzinfo=timezone(sign * off))


def format_time(t: Union[datetime, str]) -> str:
    """Formats t as RFC 3339 in UTC; a naive datetime is taken as UTC, a
    string is passed as it is."""
    if isinstance(t, str):
        return t
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


_hints: dict[type, dict[str, Any]] = {}


def _field_types(cls: type) -> dict[str, Any]:
    h = _hints.get(cls)
    if h is None:
        h = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        _hints[cls] = h
    return h


def _convert(hint: Any, v: Any) -> Any:
    if v is None:
        return None
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], v) if len(inner) == 1 else v
    if hint is datetime:
        return parse_time(v) if isinstance(v, str) else v
    if dataclasses.is_dataclass(hint) and isinstance(v, dict):
        return from_json(hint, v)
    if origin is list and args and isinstance(v, list):
        return [_convert(args[0], x) for x in v]
    return v


T = typing.TypeVar("T")


def from_json(cls: type[T], d: dict[str, Any]) -> T:
    """Builds the dataclass cls from the JSON object d: known fields are
    converted to their types, and d itself is kept in ``raw``."""
    hints = _field_types(cls)
    kw: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "raw":
            kw["raw"] = d
        elif f.name in d:
            kw[f.name] = _convert(hints[f.name], d[f.name])
    return cls(**kw)


def to_json(v: Any) -> Any:
    """Turns what a caller passes as a field into JSON: dataclasses into
    objects (their None fields left out), timedeltas into seconds,
    datetimes into RFC 3339."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: to_json(getattr(v, f.name)) for f in dataclasses.fields(v)
                if f.name != "raw" and getattr(v, f.name) is not None}
    if isinstance(v, timedelta):
        return v.total_seconds()
    if isinstance(v, datetime):
        return format_time(v)
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


#: A duration sent to the service: a Go duration string ("90s", "1h30m"),
#: a number of seconds, or a timedelta.
DurationLike = Union[str, int, float, timedelta]


@dataclass
class Sandbox:
    """The confinement an agent asks for its runs (docs/sandbox.md)."""

    mode: Optional[str] = None  # "read-only" or "workspace"
    writable: Optional[list[str]] = None
    deny_read: Optional[list[str]] = None
    network: Optional[str] = None  # "none" (absent) or "host"
    allow_hosts: Optional[list[str]] = None
    allow_unix_sockets: Optional[list[str]] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class SandboxReport:
    """What confined a run."""

    mode: str
    network: str
    writable: Optional[list[str]] = None
    mechanisms: Optional[list[str]] = None
    landlock_abi: Optional[int] = None
    denied_hosts: Optional[list[str]] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Webhook:
    """An endpoint that receives a signed POST per event of an agent's
    executions (docs/webhooks.md). ``secret`` is write-only: give it to
    create_agent/update_agent; answers never carry it, only
    ``secret_set``. Sending an agent's webhooks back without their
    secrets (as an answer shows them) keeps the secret of each URL."""

    url: str
    secret: Optional[str] = None
    secret_set: Optional[bool] = None  # read-only; may be sent back unchanged
    events: Optional[list[str]] = None  # absent: every event
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Agent:
    """An agent: what runs its tasks, its capacity, its budget and its
    webhooks."""

    name: str
    kind: str  # "shell" or "headless"
    max_parallel_tasks: int
    overflow: str  # "reject" or "queue"
    max_backlog: int
    created_at: datetime
    updated_at: datetime
    shell: Optional[str] = None
    command: Optional[list[str]] = None
    workdir: Optional[str] = None
    env_names: Optional[list[str]] = None
    pass_env: Optional[list[str]] = None
    run_as: Optional[str] = None
    sandbox: Optional[Sandbox] = None
    labels: Optional[list[str]] = None
    timeout: Optional[str] = None
    stall_timeout: Optional[str] = None
    idle_timeout: Optional[str] = None
    grace: Optional[str] = None
    max_output: Optional[int] = None
    # The retry policy (docs/service.md#retries-and-attempts): a run whose
    # attempt fails for a reason in retry_on is run again, at most
    # max_attempts attempts in all, after retry_backoff (doubled each
    # time, at most retry_max_backoff); resume continues a headless
    # agent's session with resume_prompt.
    max_attempts: Optional[int] = None
    retry_on: Optional[list[str]] = None
    retry_backoff: Optional[str] = None
    retry_max_backoff: Optional[str] = None
    resume: Optional[bool] = None
    resume_prompt: Optional[str] = None
    # The budget (docs/budgets.md): a run's ceilings (max_cost_usd,
    # max_tokens), and what all its runs may spend per calendar day and
    # month, counted in budget_time_zone (absent: UTC); budget_overrun is
    # what a run in flight does when a window is spent ("stop", the
    # default, or "finish"). A submit once a window is spent raises
    # BudgetSpent.
    max_cost_usd: Optional[float] = None
    max_tokens: Optional[int] = None
    daily_cost_usd: Optional[float] = None
    daily_tokens: Optional[int] = None
    monthly_cost_usd: Optional[float] = None
    monthly_tokens: Optional[int] = None
    budget_time_zone: Optional[str] = None
    budget_overrun: Optional[str] = None
    webhooks: Optional[list[Webhook]] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Execution:
    """One attempt of a task. In listings it is a summary (``summary``
    true: no stdout, stderr or result; input and error cut); ``get``
    returns it whole.

    A run is one or more attempts: an attempt that failed and was retried
    names the next in ``retried_by`` (which names it in ``retry_of``, says
    why in ``retry_reason``, and waits, status "waiting", until
    ``next_attempt_at``). ``wait`` follows a run to its last attempt."""

    id: str
    agent: str
    trigger: str  # "api", "schedule" or "retry"
    attempt: int
    input: str
    status: str  # "queued", "waiting", "running", or one of TERMINAL_STATUSES
    created_at: datetime
    schedule_id: Optional[str] = None
    retry_of: Optional[str] = None
    fire_at: Optional[datetime] = None
    max_attempts: Optional[int] = None
    retried_by: Optional[str] = None
    retry_reason: Optional[str] = None
    next_attempt_at: Optional[datetime] = None
    resume_session: Optional[str] = None
    traceparent: Optional[str] = None  # the W3C trace context of the run's trace (a service that traces)
    tracestate: Optional[str] = None
    chain_cost_usd: Optional[float] = None
    timeout: Optional[str] = None
    error_type: Optional[str] = None
    error: Optional[str] = None
    exit_code: Optional[int] = None
    signal: Optional[str] = None
    result: Optional[str] = None
    session_id: Optional[str] = None
    num_turns: Optional[int] = None
    cost_usd: Optional[float] = None
    cost_estimated: Optional[bool] = None  # cost_usd was priced by corral: the agent reported none
    usage: Optional[dict[str, Any]] = None
    finalized_by: Optional[str] = None
    reset_at: Optional[datetime] = None
    resume_note: Optional[str] = None
    stdout: Optional[str] = None
    stderr: Optional[str] = None
    stdout_bytes: Optional[int] = None
    stderr_bytes: Optional[int] = None
    output_truncated: Optional[bool] = None
    log_note: Optional[str] = None
    containment: Optional[str] = None
    killed: Optional[int] = None
    reclaimed: Optional[int] = None
    survivors: Optional[int] = None
    sandbox: Optional[SandboxReport] = None
    user: Optional[str] = None
    slot: Optional[int] = None
    worker_id: Optional[str] = None
    cancel_requested: Optional[bool] = None
    admitted_at: Optional[datetime] = None
    started_at: Optional[datetime] = None
    finished_at: Optional[datetime] = None
    duration_ms: Optional[int] = None
    summary: Optional[bool] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def finished(self) -> bool:
        """Whether the execution is in a terminal status (it never changes again)."""
        return self.status in TERMINAL_STATUSES

    @property
    def run_finished(self) -> bool:
        """Whether the run is over: this attempt is finished and no further
        attempt follows it."""
        return self.finished and not self.retried_by

    @property
    def succeeded(self) -> bool:
        return self.status == "succeeded"


@dataclass
class Schedule:
    """A cron schedule of an agent's task."""

    id: str
    agent: str
    cron: str
    time_zone: str
    input: str
    enabled: bool
    missed: str  # "skip" or "run_once"
    created_at: datetime
    updated_at: datetime
    timeout: Optional[str] = None
    next_fire_at: Optional[datetime] = None
    last_fire_at: Optional[datetime] = None
    last_execution_id: Optional[str] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Slot:
    """A capacity slot held by a running execution."""

    slot: int
    execution_id: str
    since: datetime
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Slots:
    """An agent's capacity, how much of it is used, and by whom."""

    agent: str
    capacity: int
    used: int
    slots: list[Slot] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class WindowSpend:
    """What an agent's runs spent in one budget window: ``kind`` "daily"
    or "monthly", ``key`` the window's name on every worker, ``start`` and
    ``end`` its span (the next window opens at ``end``), its ceilings when
    the agent sets them, and what was spent."""

    kind: str
    key: str
    start: datetime
    end: datetime
    cost_usd: float
    tokens: int
    cost_limit_usd: Optional[float] = None
    token_limit: Optional[int] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Spend:
    """An agent's budget windows as they stand now (none when its budget
    bounds no day or month)."""

    agent: str
    windows: list[WindowSpend] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class WebhookDelivery:
    """One POST of an execution's event to a webhook, delivered at least
    once: ``status`` "pending" (``next_at`` says when it is tried next),
    "delivered" or "failed" (given up); ``last_status`` and
    ``last_error`` the receiver's last answer. ``id`` is the
    Corral-Delivery header of each of its attempts."""

    id: str
    agent: str
    event: str
    url: str
    status: str
    attempts: int
    created_at: datetime
    execution_id: Optional[str] = None
    last_status: Optional[int] = None
    last_error: Optional[str] = None
    next_at: Optional[datetime] = None
    delivered_at: Optional[datetime] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Readiness:
    """The answer of /readyz: ``ready`` is False (not an exception) while
    the worker cannot take work; ``worker`` and ``reason`` come only with
    the token."""

    ready: bool
    status: str
    worker: Optional[str] = None
    reason: Optional[str] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Page(typing.Generic[T]):
    """One page of a listing; ``next_cursor`` continues it ("" at the end)."""

    items: list[T]
    next_cursor: str


@dataclass(frozen=True)
class LogEvent:
    """One record of an execution's log: ``stream`` is stdout, stderr,
    event (a line of a headless agent's stream, as JSON text) or system."""

    type: ClassVar[str] = "log"
    seq: int
    time: datetime
    stream: str
    text: str


@dataclass(frozen=True)
class StatusEvent:
    """The execution as it stands when a stream (or a resumed stream) opens."""

    type: ClassVar[str] = "status"
    execution: Execution


@dataclass(frozen=True)
class EndEvent:
    """The finished execution: the last event of a followed stream."""

    type: ClassVar[str] = "end"
    execution: Execution


@dataclass(frozen=True)
class ReplayedEvent:
    """The last event of a replay (``logs``) of an unfinished execution:
    the execution as it stands."""

    type: ClassVar[str] = "replayed"
    execution: Execution


Event = Union[StatusEvent, LogEvent, EndEvent, ReplayedEvent]
