"""A client of corral's task service (docs/api.md, docs/openapi.yaml).

    from corral_client import Client
    c = Client()                      # CORRAL_ADDR, CORRAL_TOKEN or the data directory's token
    e = c.submit("coder", "fix the failing test")
    for ev in c.follow(e.id):         # the live log; resumes across a restart of the service
        print(getattr(ev, "text", ev.type))
    print(c.wait(e.id).result)

Client blocks; AsyncClient has the same methods for asyncio. Standard
library only.
"""

from ._async import AsyncClient
from ._client import Client
from ._errors import (APIError, AtCapacity, BadRequest, BudgetSpent, Conflict, CorralError, Forbidden, LockedOut,
                      NotFound, Rejected, ServerError, Timeout, Unauthorized, Unavailable, Unreachable, WaitTimeout)
from ._operations import OPERATIONS
from ._types import (TERMINAL_STATUSES, Agent, EndEvent, Event, Execution, LogEvent, Page, Readiness,
                     ReplayedEvent, Sandbox, SandboxReport, Schedule, Slot, Slots, Spend, StatusEvent, Webhook,
                     WebhookDelivery, WindowSpend)

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "OPERATIONS",
    "Agent", "Execution", "Schedule", "Slot", "Slots", "Sandbox", "SandboxReport", "Readiness", "Page",
    "Webhook", "WebhookDelivery", "Spend", "WindowSpend",
    "Event", "StatusEvent", "LogEvent", "EndEvent", "ReplayedEvent", "TERMINAL_STATUSES",
    "CorralError", "APIError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Rejected",
    "AtCapacity", "BudgetSpent", "LockedOut", "Unavailable", "ServerError", "Unreachable", "Timeout", "WaitTimeout",
]
