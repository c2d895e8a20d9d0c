"""What the blocking and the asyncio clients share: where the service
and its token are, how a call is built and its answer read, the
Server-Sent Events parser, and the rule for resuming a broken stream.
No I/O happens here."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union
from urllib.parse import quote, urlencode, urlsplit

from . import _errors
from ._types import (EndEvent, Event, Execution, LogEvent, ReplayedEvent, StatusEvent, format_time,
                     from_json, parse_time, to_json)

DEFAULT_ADDR = "127.0.0.1:7070"
#: Seconds a call may take unless the client or the call says otherwise.
DEFAULT_TIMEOUT = 30.0
#: Seconds an event stream may stay silent before it is taken as broken
#: (the service sends a keep-alive every 15 s).
STREAM_IDLE = 45.0
#: Seconds a broken event stream is retried without receiving anything
#: before the follow gives up (a restart of the service fits in it).
RECONNECT_FOR = 60.0
#: Bound on one event of a stream (an execution holds up to 16 MiB of
#: each output stream, escaped).
MAX_EVENT = 128 << 20
USER_AGENT = "corral-client-python"


def data_dir() -> Optional[Path]:
    """The service's data directory as `corral serve` picks it: CORRAL_DATA,
    else $XDG_DATA_HOME/corral, else ~/.local/share/corral."""
    if d := os.environ.get("CORRAL_DATA"):
        return Path(d)
    if d := os.environ.get("XDG_DATA_HOME"):
        return Path(d) / "corral"
    try:
        return Path.home() / ".local" / "share" / "corral"
    except RuntimeError:
        return None


def find_token(token: Optional[str], directory: Union[str, os.PathLike[str], None]) -> Optional[str]:
    """The token as the CLI finds it: the argument, else CORRAL_TOKEN, else
    the file 'token' of the data directory (directory, else data_dir());
    None when there is none (a service run with --insecure-no-auth)."""
    if token:
        return token.strip()
    if t := os.environ.get("CORRAL_TOKEN", "").strip():
        return t
    d = Path(directory) if directory is not None else data_dir()
    if d is not None:
        try:
            return (d / "token").read_text().strip() or None
        except OSError:
            pass
    return None


@dataclass(frozen=True)
class Endpoint:
    """Where the service is: scheme, host, port and the path prefix."""

    scheme: str
    host: str
    port: int
    prefix: str

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.prefix}"

    @property
    def netloc(self) -> str:
        h = f"[{self.host}]" if ":" in self.host else self.host
        return f"{h}:{self.port}"


def find_endpoint(url: Optional[str]) -> Endpoint:
    """The service's address: url, else CORRAL_ADDR, else 127.0.0.1:7070;
    HOST:PORT and http(s)://HOST:PORT both work."""
    u = url or os.environ.get("CORRAL_ADDR") or DEFAULT_ADDR
    if "://" not in u:
        u = "http://" + u
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"corral service URL {u!r}: want HOST:PORT or http(s)://HOST:PORT")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Endpoint(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))


def seg(s: str) -> str:
    """One path segment, escaped."""
    if not isinstance(s, str) or not s:
        raise ValueError(f"want a non-empty name or id, got {s!r}")
    return quote(s, safe="")


@dataclass
class Call:
    """One request: the operation it is (its operationId), method, path,
    query, JSON body and extra headers."""

    op: str
    method: str
    path: str
    query: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    accept: str = "application/json"
    #: error statuses that are answers, not exceptions (503 of /readyz)
    allow: tuple[int, ...] = ()

    def target(self, ep: Endpoint) -> str:
        q = {k: v for k, v in self.query.items() if v is not None and v != ""}
        return ep.prefix + self.path + ("?" + urlencode(q) if q else "")

    def encode(self) -> Optional[bytes]:
        if self.body is None:
            return None
        return json.dumps(to_json(self.body), separators=(",", ":")).encode()

    def header_list(self, ep: Endpoint, token: Optional[str], body: Optional[bytes]) -> dict[str, str]:
        h = {"Host": ep.netloc, "User-Agent": USER_AGENT, "Accept": self.accept, "Connection": "close"}
        if self.method not in ("GET", "HEAD"):
            # Even without a body: the service takes no state change that
            # is not JSON, which no web page can send it.
            h["Content-Type"] = "application/json"
            h["Content-Length"] = str(len(body or b""))
        if token:
            h["Authorization"] = "Bearer " + token
        h.update({k: v for k, v in self.headers.items() if v})
        return h


#: A hook that sees every call before it is sent (tests use it to prove
#: that every documented operation was exercised).
Observer = Callable[[Call], None]


def check(status: int, headers: Mapping[str, str], body: bytes, call: Call) -> None:
    """Raises the APIError for an error answer."""
    if status >= 400 and status not in call.allow:
        raise _errors.error_for(status, headers, body, f"{call.method} {call.path}")


def decode(body: bytes, call: Call) -> Any:
    """The answer's body: text for a text call, else decoded JSON."""
    if call.accept.startswith("text/plain"):
        return body.decode("utf-8", "replace")
    try:
        return json.loads(body) if body else None
    except ValueError as e:
        raise _errors.ServerError(200, "", f"unreadable answer to {call.method} {call.path}: {e}") from None


def fields_body(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON object of keyword fields, those given as None left out."""
    return {k: v for k, v in fields.items() if v is not None}


def list_query(**q: Any) -> dict[str, Any]:
    out = {}
    for k, v in q.items():
        if v is None or v == "":
            continue
        if k in ("since", "until"):
            v = format_time(v)
        elif k == "status" and not isinstance(v, str):
            v = ",".join(v)
        out[k] = str(v)
    return out


class SSEParser:
    """Server-Sent Events, fed bytes as they come: returns the events
    completed, as (event, id, data); comments and unknown fields are
    skipped, as the format says."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._event = ""
        self._id: Optional[str] = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, Optional[str], str]]:
        self._buf += chunk
        out = []
        start = 0
        while True:
            i = self._buf.find(b"\n", start)
            if i < 0:
                break
            line = bytes(self._buf[start:i]).rstrip(b"\r").decode("utf-8", "replace")
            start = i + 1
            if ev := self._line(line):
                out.append(ev)
        del self._buf[:start]
        if len(self._buf) > MAX_EVENT:
            raise _errors.ServerError(200, "", f"event stream line longer than {MAX_EVENT} bytes")
        return out

    def _line(self, line: str) -> Optional[tuple[str, Optional[str], str]]:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            ev = (self._event or "message", self._id, "\n".join(self._data))
            self._event, self._data = "", []
            return ev
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


def typed_event(name: str, data: str) -> Optional[Event]:
    """The typed event of an SSE event of the execution stream; None for
    an event this client does not know (a newer service's)."""
    try:
        d = json.loads(data)
    except ValueError:
        raise _errors.ServerError(200, "", f"event {name}: data is not JSON") from None
    if name == "log":
        return LogEvent(seq=int(d["seq"]), time=parse_time(d["time"]), stream=d["stream"], text=d["text"])
    kinds = {"status": StatusEvent, "end": EndEvent, "replayed": ReplayedEvent}
    if name in kinds:
        return kinds[name](from_json(Execution, d))  # type: ignore[abstract]
    return None


#: A position past any log: asking for the records after it sends only
#: the status and the end (what wait needs).
PAST_THE_LOG = 1 << 62


class Resume:
    """The state of a followed stream across reconnections: the last
    record received (sent back as Last-Event-ID), the execution last seen,
    and how long it has gone without progress."""

    def __init__(self, id: str, after: int, live: bool, reconnect_for: float, skip_logs: bool = False):
        self.id = id
        self.last = after
        self.live = live
        self.reconnect_for = reconnect_for
        self.skip_logs = skip_logs
        self.execution: Optional[Execution] = None
        self.done = False
        self._progress = time.monotonic()
        self._tries = 0

    def call(self) -> Call:
        last = PAST_THE_LOG if self.skip_logs else self.last
        headers = {"Last-Event-ID": str(last)} if last > 0 else {}
        query = {} if self.live else {"follow": "false"}
        return Call("executionEvents", "GET", f"/v1/executions/{seg(self.id)}/events", query=query,
                    headers=headers, accept="text/event-stream")

    def accept(self, ev: Event) -> None:
        """Takes note of an event received."""
        self._progress = time.monotonic()
        self._tries = 0
        if isinstance(ev, LogEvent):
            self.last = ev.seq
        else:
            self.execution = ev.execution
            if isinstance(ev, (EndEvent, ReplayedEvent)):
                self.done = True

    def retry_delay(self, err: BaseException) -> float:
        """The pause before opening the stream again after err; raises
        Unreachable when it has gone reconnect_for seconds without
        receiving anything."""
        if time.monotonic() - self._progress > self.reconnect_for:
            raise _errors.Unreachable(
                f"event stream of execution {self.id} broke and could not be opened again for "
                f"{self.reconnect_for:g}s ({err}); follow it again from record {self.last} "
                f"(after={self.last}) once the service is back") from err
        self._tries += 1
        return min(0.1 * 2 ** self._tries, 2.0)


def retryable(err: BaseException) -> bool:
    """Whether a follow opens the stream again after err: a broken or
    refused connection, a silent stream, or a service restarting (503)."""
    if isinstance(err, _errors.Unavailable):
        return True
    if isinstance(err, _errors.APIError):
        return False
    return isinstance(err, (_errors.Unreachable, _errors.Timeout, StreamEnded, OSError))


class StreamEnded(Exception):
    """The event stream closed before the execution's end."""

    def __str__(self) -> str:
        return "the event stream ended before the execution did (the service restarted?)"


def timeout_message(call: Call, ep: Endpoint, timeout: float) -> str:
    return (f"{call.method} {call.path} to the corral service at {ep.url} did not complete within "
            f"{timeout:g}s: pass a longer timeout=, or check the service")


def unreachable_message(ep: Endpoint, err: BaseException) -> str:
    return f"corral service at {ep.url}: {err} (is `corral serve` running? pass url= or set CORRAL_ADDR)"


def wait_timeout(st: Resume) -> _errors.WaitTimeout:
    """The WaitTimeout of a wait that ran out, with the execution as last seen."""
    e = st.execution
    state = f"still {e.status}" if e else "not seen"
    return _errors.WaitTimeout(f"execution {st.id} is {state} after the wait's timeout: wait again, or cancel it", e)
