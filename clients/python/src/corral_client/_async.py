"""The asyncio client: the same methods as Client, awaited, over asyncio
streams (one HTTP/1.1 connection per call), so that cancelling a task
that awaits one of them closes its connection at once."""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from typing import Any, AsyncIterator, Optional, Sequence, Union

from . import _calls
from ._core import (wait_timeout as _wait_timeout, DEFAULT_TIMEOUT, RECONNECT_FOR, STREAM_IDLE, Call, Endpoint, Observer, Resume,
                    SSEParser, StreamEnded, check, decode, find_endpoint, find_token, retryable,
                    timeout_message, typed_event, unreachable_message)
from ._errors import ServerError, Timeout, Unreachable
from ._types import (Agent, DurationLike, EndEvent, Event, Execution, Page, Readiness, Schedule, Slots, Spend,
                     WebhookDelivery)

_MAX_HEAD = 1 << 20


class _Response:
    """An answer being read: its status, headers (lower-case names) and
    body, de-chunked."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int,
                 headers: dict[str, str], method: str):
        self.reader, self.writer, self.status, self.headers = reader, writer, status, headers
        te = headers.get("transfer-encoding", "").lower()
        self._chunked = "chunked" in te
        self._left: Optional[int] = None
        if method == "HEAD" or status in (204, 304):
            self._left = 0
        elif not self._chunked and "content-length" in headers:
            self._left = int(headers["content-length"])
        self._chunk_left = 0
        self._done = False

    async def read(self, n: int = 65536) -> bytes:
        """Up to n bytes of the body; b"" at its end."""
        if self._done:
            return b""
        if self._chunked:
            if self._chunk_left == 0:
                line = await self.reader.readline()
                if not line:
                    raise ConnectionResetError("connection closed inside a chunked body")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (await self.reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass
                    self._done = True
                    return b""
                self._chunk_left = size
            b = await self.reader.read(min(n, self._chunk_left))
            if not b:
                raise ConnectionResetError("connection closed inside a chunk")
            self._chunk_left -= len(b)
            if self._chunk_left == 0:
                await self.reader.readexactly(2)
            return b
        if self._left is not None:
            if self._left == 0:
                self._done = True
                return b""
            b = await self.reader.read(min(n, self._left))
            if not b:
                raise ConnectionResetError("connection closed before the end of the body")
            self._left -= len(b)
            return b
        b = await self.reader.read(n)
        if not b:
            self._done = True
        return b

    async def read_all(self, limit: int = 1 << 62) -> bytes:
        out = bytearray()
        while b := await self.read():
            out += b
            if len(out) > limit:
                break
        return bytes(out)

    def close(self) -> None:
        self.writer.close()


class AsyncClient:
    """The asyncio flavour of Client: the same constructor and methods,
    each a coroutine (and executions, schedules, follow and logs async
    iterators). Each call has its own connection, closed when the call
    returns, fails or is cancelled; an event iterator's connection is
    closed when the iterator is closed (``contextlib.aclosing``) or the
    task consuming it is cancelled."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, *,
                 data_dir: Union[str, os.PathLike[str], None] = None, timeout: float = DEFAULT_TIMEOUT,
                 stream_idle: float = STREAM_IDLE, reconnect_for: float = RECONNECT_FOR,
                 ssl_context: Optional[ssl.SSLContext] = None, observer: Optional[Observer] = None):
        self.endpoint: Endpoint = find_endpoint(url)
        self.token = find_token(token, data_dir)
        self.timeout = timeout
        self.stream_idle = stream_idle
        self.reconnect_for = reconnect_for
        self._ssl = ssl_context
        self._observer = observer

    @property
    def url(self) -> str:
        return self.endpoint.url

    def __repr__(self) -> str:
        return f"AsyncClient({self.url!r})"

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass  # no connection outlives its call

    # -- transport --------------------------------------------------------

    async def _open(self, call: Call) -> _Response:
        if self._observer:
            self._observer(call)
        ep = self.endpoint
        body = call.encode()
        ctx = None
        if ep.scheme == "https":
            ctx = self._ssl or ssl.create_default_context()
        try:
            reader, writer = await asyncio.open_connection(ep.host, ep.port, ssl=ctx, limit=_MAX_HEAD)
        except OSError as e:
            raise Unreachable(unreachable_message(ep, e)) from e
        try:
            head = f"{call.method} {call.target(ep)} HTTP/1.1\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in call.header_list(ep, self.token, body).items())
            writer.write(head.encode("latin-1") + b"\r\n" + (body or b""))
            await writer.drain()
            raw = await reader.readuntil(b"\r\n\r\n")
            lines = raw.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ", 2)
            if len(parts) < 2 or not parts[0].startswith("HTTP/"):
                raise ServerError(0, "", f"not an HTTP answer from {ep.url}: {lines[0][:80]!r}")
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if ":" in line:
                    k, _, v = line.partition(":")
                    headers[k.strip().lower()] = v.strip()
            resp = _Response(reader, writer, int(parts[1]), headers, call.method)
            if resp.status >= 400 and resp.status not in call.allow:
                check(resp.status, headers, await resp.read_all(1 << 20), call)
            return resp
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
            writer.close()
            raise Unreachable(unreachable_message(ep, e)) from e
        except BaseException:
            writer.close()
            raise

    async def _run(self, op: _calls.Op, timeout: Optional[float] = None) -> Any:
        call, dec = op
        t = self.timeout if timeout is None else timeout

        async def run() -> tuple[int, dict[str, str], bytes]:
            resp = await self._open(call)
            try:
                return resp.status, resp.headers, await resp.read_all()
            except (OSError, asyncio.IncompleteReadError) as e:
                raise Unreachable(unreachable_message(self.endpoint, e)) from e
            finally:
                resp.close()
        try:
            status, headers, data = await asyncio.wait_for(run(), t)
        except asyncio.TimeoutError:
            raise Timeout(timeout_message(call, self.endpoint, t)) from None
        check(status, headers, data, call)
        return dec(decode(data, call))

    async def _events(self, st: Resume, deadline: Optional[float] = None) -> AsyncIterator[Event]:
        """The events of st's stream, opened again (with Last-Event-ID)
        whenever it breaks, until its end."""
        while True:
            idle = self.stream_idle
            if deadline is not None:
                idle = min(idle, max(deadline - time.monotonic(), 0.001))
            resp: Optional[_Response] = None
            try:
                call = st.call()
                try:
                    resp = await asyncio.wait_for(self._open(call), self.timeout)
                except asyncio.TimeoutError:
                    raise Timeout(timeout_message(call, self.endpoint, self.timeout)) from None
                parser = SSEParser()
                while not st.done:
                    try:
                        b = await asyncio.wait_for(resp.read(), idle)
                    except asyncio.TimeoutError:
                        raise Timeout(f"event stream of execution {st.id} silent for {idle:g}s") from None
                    except (OSError, asyncio.IncompleteReadError) as e:
                        raise Unreachable(unreachable_message(self.endpoint, e)) from e
                    if not b:
                        raise StreamEnded()
                    for name, _id, data in parser.feed(b):
                        ev = typed_event(name, data)
                        if ev is None:
                            continue
                        st.accept(ev)
                        yield ev
                        if st.done:
                            break
                return
            except Exception as e:
                if deadline is not None and time.monotonic() >= deadline:
                    raise _wait_timeout(st) from None
                if not retryable(e):
                    raise
                pause = st.retry_delay(e)
            finally:
                if resp is not None:
                    resp.close()
            if deadline is not None:
                pause = min(pause, max(deadline - time.monotonic(), 0))
            await asyncio.sleep(pause)

    # -- health -----------------------------------------------------------

    async def health(self, *, call_timeout: Optional[float] = None) -> dict[str, Any]:
        """See Client.health."""
        return await self._run(_calls.health(), call_timeout)

    async def ready(self, *, call_timeout: Optional[float] = None) -> Readiness:
        """See Client.ready."""
        return await self._run(_calls.ready(), call_timeout)

    async def metrics(self, *, call_timeout: Optional[float] = None) -> str:
        """See Client.metrics."""
        return await self._run(_calls.metrics(), call_timeout)

    # -- agents -----------------------------------------------------------

    async def agents(self, *, call_timeout: Optional[float] = None) -> list[Agent]:
        """See Client.agents."""
        return await self._run(_calls.agents(), call_timeout)

    async def agent(self, name: str, *, call_timeout: Optional[float] = None) -> Agent:
        """See Client.agent."""
        return await self._run(_calls.agent(name), call_timeout)

    async def create_agent(self, name: str, kind: str, *, call_timeout: Optional[float] = None, **fields: Any) -> Agent:
        """See Client.create_agent."""
        return await self._run(_calls.create_agent(name, kind, fields), call_timeout)

    async def update_agent(self, name: str, *, call_timeout: Optional[float] = None, **fields: Any) -> Agent:
        """See Client.update_agent."""
        return await self._run(_calls.update_agent(name, fields), call_timeout)

    async def delete_agent(self, name: str, *, call_timeout: Optional[float] = None) -> None:
        """See Client.delete_agent."""
        await self._run(_calls.delete_agent(name), call_timeout)

    async def slots(self, agent: str, *, call_timeout: Optional[float] = None) -> Slots:
        """See Client.slots."""
        return await self._run(_calls.slots(agent), call_timeout)

    async def spend(self, agent: str, *, call_timeout: Optional[float] = None) -> Spend:
        """See Client.spend."""
        return await self._run(_calls.spend(agent), call_timeout)

    # -- tasks and executions ---------------------------------------------

    async def submit(self, agent: str, input: str, *, timeout: Optional[DurationLike] = None,
                     traceparent: Optional[str] = None, tracestate: Optional[str] = None,
                     call_timeout: Optional[float] = None, **fields: Any) -> Execution:
        """See Client.submit."""
        return await self._run(_calls.submit(agent, input, timeout, traceparent, tracestate, fields), call_timeout)

    async def get(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """See Client.get."""
        return await self._run(_calls.get(id), call_timeout)

    async def cancel(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """See Client.cancel."""
        return await self._run(_calls.cancel(id), call_timeout)

    async def retry(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """See Client.retry."""
        return await self._run(_calls.retry(id), call_timeout)

    async def webhooks(self, id: str, *, call_timeout: Optional[float] = None) -> list[WebhookDelivery]:
        """See Client.webhooks."""
        return await self._run(_calls.webhooks(id), call_timeout)

    async def execution_page(self, *, agent: Optional[str] = None, status: Union[str, Sequence[str], None] = None,
                             since: Any = None, until: Any = None, limit: Optional[int] = None,
                             cursor: Optional[str] = None, call_timeout: Optional[float] = None) -> Page[Execution]:
        """See Client.execution_page."""
        return await self._run(_calls.execution_page(agent, status, since, until, limit, cursor), call_timeout)

    async def executions(self, *, agent: Optional[str] = None, status: Union[str, Sequence[str], None] = None,
                         since: Any = None, until: Any = None, page_size: Optional[int] = None,
                         call_timeout: Optional[float] = None) -> AsyncIterator[Execution]:
        """See Client.executions."""
        cursor = None
        while True:
            page = await self.execution_page(agent=agent, status=status, since=since, until=until,
                                             limit=page_size, cursor=cursor, call_timeout=call_timeout)
            for e in page.items:
                yield e
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def follow(self, id: str, *, after: int = 0) -> AsyncIterator[Event]:
        """See Client.follow."""
        return self._events(Resume(id, after, True, self.reconnect_for))

    def logs(self, id: str, *, after: int = 0) -> AsyncIterator[Event]:
        """See Client.logs."""
        return self._events(Resume(id, after, False, self.reconnect_for))

    async def wait(self, id: str, timeout: Optional[float] = None, *, follow_retries: bool = True) -> Execution:
        """See Client.wait: the run's last attempt, followed through its
        retries unless ``follow_retries=False``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            st = Resume(id, 0, True, self.reconnect_for, skip_logs=True)
            end = None
            events = self._events(st, deadline)
            try:
                async for ev in events:
                    if isinstance(ev, EndEvent):
                        end = ev.execution
                        break
            finally:
                await events.aclose()
            if end is None:
                raise _wait_timeout(st)
            if not follow_retries or not end.retried_by:
                return end
            id = end.retried_by

    # -- schedules ----------------------------------------------------------

    async def schedule_page(self, agent: Optional[str] = None, *, limit: Optional[int] = None,
                            cursor: Optional[str] = None, call_timeout: Optional[float] = None) -> Page[Schedule]:
        """See Client.schedule_page."""
        return await self._run(_calls.schedule_page(agent, limit, cursor), call_timeout)

    async def schedules(self, agent: Optional[str] = None, *, page_size: Optional[int] = None,
                        call_timeout: Optional[float] = None) -> AsyncIterator[Schedule]:
        """See Client.schedules."""
        cursor = None
        while True:
            page = await self.schedule_page(agent, limit=page_size, cursor=cursor, call_timeout=call_timeout)
            for s in page.items:
                yield s
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> Schedule:
        """See Client.schedule."""
        return await self._run(_calls.schedule(agent, id), call_timeout)

    async def create_schedule(self, agent: str, cron: str, input: str, *, call_timeout: Optional[float] = None,
                              **fields: Any) -> Schedule:
        """See Client.create_schedule."""
        return await self._run(_calls.create_schedule(agent, cron, input, fields), call_timeout)

    async def update_schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None,
                              **fields: Any) -> Schedule:
        """See Client.update_schedule."""
        return await self._run(_calls.update_schedule(agent, id, fields), call_timeout)

    async def delete_schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> None:
        """See Client.delete_schedule."""
        await self._run(_calls.delete_schedule(agent, id), call_timeout)

    async def trigger(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """See Client.trigger."""
        return await self._run(_calls.trigger(agent, id), call_timeout)
