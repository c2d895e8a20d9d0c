"""The blocking client."""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import time
from typing import Any, Iterator, Optional, Sequence, Union

from . import _calls
from ._core import (wait_timeout as _wait_timeout, DEFAULT_TIMEOUT, RECONNECT_FOR, STREAM_IDLE, Call, Endpoint, Observer, Resume,
                    SSEParser, StreamEnded, check, decode, find_endpoint, find_token, retryable,
                    timeout_message, typed_event, unreachable_message)
from ._errors import Timeout, Unreachable
from ._types import (Agent, DurationLike, EndEvent, Event, Execution, Page, Readiness, Schedule, Slots, Spend,
                     WebhookDelivery)


class Client:
    """A client of one corral service (docs/api.md, docs/openapi.yaml).

    ``url`` is the service's address (HOST:PORT or http(s)://HOST:PORT;
    default CORRAL_ADDR, else 127.0.0.1:7070). ``token`` is its API token
    (default CORRAL_TOKEN, else the file 'token' of ``data_dir``, which
    defaults to CORRAL_DATA, else $XDG_DATA_HOME/corral, else
    ~/.local/share/corral — as the corral CLI finds them).

    Every call is bounded by ``timeout`` seconds (connecting, sending and
    reading the whole answer; a call's own ``call_timeout=`` overrides it:
    ``timeout=`` of a method is the API's field, a run's budget),
    except the event streams of ``follow``/``logs``, which are bounded by
    ``stream_idle`` seconds of silence instead (the service sends a
    keep-alive every 15 s), and ``wait``, bounded by its own timeout.

    Each call opens its own connection and closes it: a Client holds no
    socket between calls and may be shared by threads. Errors are
    exceptions of corral_client (APIError subclasses for what the service
    answered, Unreachable and Timeout otherwise).
    """

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
        return f"Client({self.url!r})"

    # -- transport --------------------------------------------------------

    def _connect(self, timeout: float) -> http.client.HTTPConnection:
        ep = self.endpoint
        if ep.scheme == "https":
            ctx = self._ssl or ssl.create_default_context()
            return http.client.HTTPSConnection(ep.host, ep.port, timeout=timeout, context=ctx)
        return http.client.HTTPConnection(ep.host, ep.port, timeout=timeout)

    def _open(self, call: Call, timeout: float) -> tuple[http.client.HTTPConnection, socket.socket, http.client.HTTPResponse]:
        """Sends call and reads the answer's head; raises the APIError of an
        error answer (reading its body)."""
        if self._observer:
            self._observer(call)
        body = call.encode()
        conn = self._connect(timeout)
        try:
            conn.connect()
            sock = conn.sock
            conn.putrequest(call.method, call.target(self.endpoint), skip_host=True, skip_accept_encoding=True)
            for k, v in call.header_list(self.endpoint, self.token, body).items():
                # Not "Connection: close": http.client would then close
                # the socket under the answer, and its timeout could no
                # longer be set; the connection is closed after the call.
                if k != "Connection":
                    conn.putheader(k, v)
            conn.endheaders(body)
            if call.accept == "text/event-stream":
                sock.settimeout(max(self.stream_idle, timeout))
            resp = conn.getresponse()
            if resp.status >= 400 and resp.status not in call.allow:
                check(resp.status, resp.headers, resp.read(1 << 20), call)
            return conn, sock, resp
        except BaseException:
            conn.close()
            raise

    def _run(self, op: _calls.Op, timeout: Optional[float] = None) -> Any:
        call, dec = op
        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        try:
            conn, sock, resp = self._open(call, t)
            try:
                chunks = []
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise socket.timeout()
                    _settimeout(sock, left)
                    b = resp.read(65536)
                    if not b:
                        break
                    chunks.append(b)
                status, headers = resp.status, resp.headers
            finally:
                conn.close()
        except TimeoutError:
            raise Timeout(timeout_message(call, self.endpoint, t)) from None
        except (OSError, http.client.HTTPException) as e:
            raise Unreachable(unreachable_message(self.endpoint, e)) from e
        data = b"".join(chunks)
        check(status, headers, data, call)
        return dec(decode(data, call))

    def _stream_once(self, st: Resume, idle: float) -> Iterator[Event]:
        """Reads one event stream; raises StreamEnded if it closes early."""
        call = st.call()
        try:
            conn, sock, resp = self._open(call, self.timeout)
        except TimeoutError:
            raise Timeout(timeout_message(call, self.endpoint, self.timeout)) from None
        except (OSError, http.client.HTTPException) as e:
            raise Unreachable(unreachable_message(self.endpoint, e)) from e
        try:
            parser = SSEParser()
            while True:
                _settimeout(sock, idle)
                try:
                    b = resp.read1(65536)
                except TimeoutError:
                    raise Timeout(f"event stream of execution {st.id} silent for {idle:g}s") from None
                except (OSError, http.client.HTTPException) as e:
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
                        return
        finally:
            conn.close()

    def _events(self, st: Resume, deadline: Optional[float] = None) -> Iterator[Event]:
        """The events of st's stream, opened again (from the last record
        received, with Last-Event-ID) whenever it breaks, until its end."""
        while True:
            idle = self.stream_idle
            if deadline is not None:
                idle = min(idle, max(deadline - time.monotonic(), 0.001))
            try:
                yield from self._stream_once(st, idle)
                return
            except Exception as e:
                if deadline is not None and time.monotonic() >= deadline:
                    raise _wait_timeout(st) from None
                if not retryable(e):
                    raise
                pause = st.retry_delay(e)
            if deadline is not None:
                pause = min(pause, max(deadline - time.monotonic(), 0))
            time.sleep(pause)

    # -- health -----------------------------------------------------------

    def health(self, *, call_timeout: Optional[float] = None) -> dict[str, Any]:
        """GET /healthz: {"status": "ok"} while the service serves HTTP."""
        return self._run(_calls.health(), call_timeout)

    def ready(self, *, call_timeout: Optional[float] = None) -> Readiness:
        """GET /readyz: whether the worker can take work (not an exception
        when it cannot)."""
        return self._run(_calls.ready(), call_timeout)

    def metrics(self, *, call_timeout: Optional[float] = None) -> str:
        """GET /metrics: the Prometheus text."""
        return self._run(_calls.metrics(), call_timeout)

    # -- agents -----------------------------------------------------------

    def agents(self, *, call_timeout: Optional[float] = None) -> list[Agent]:
        """Every agent, by name."""
        return self._run(_calls.agents(), call_timeout)

    def agent(self, name: str, *, call_timeout: Optional[float] = None) -> Agent:
        """One agent; NotFound if there is none of that name."""
        return self._run(_calls.agent(name), call_timeout)

    def create_agent(self, name: str, kind: str, *, call_timeout: Optional[float] = None, **fields: Any) -> Agent:
        """Creates an agent of kind "shell" or "headless"; fields are the
        API's (command, workdir, env, max_parallel_tasks, overflow,
        timeout, sandbox, …: docs/api.md#agents). Durations may be Go
        strings, seconds or timedeltas. Returns it with its defaults."""
        return self._run(_calls.create_agent(name, kind, fields), call_timeout)

    def update_agent(self, name: str, *, call_timeout: Optional[float] = None, **fields: Any) -> Agent:
        """Changes the given fields of an agent; env merges name by name
        (env={"KEY": None} removes KEY)."""
        return self._run(_calls.update_agent(name, fields), call_timeout)

    def delete_agent(self, name: str, *, call_timeout: Optional[float] = None) -> None:
        """Deletes an agent and its schedules; Conflict (busy) while it has
        queued or running executions."""
        self._run(_calls.delete_agent(name), call_timeout)

    def slots(self, agent: str, *, call_timeout: Optional[float] = None) -> Slots:
        """An agent's capacity and the slots its running executions hold."""
        return self._run(_calls.slots(agent), call_timeout)

    def spend(self, agent: str, *, call_timeout: Optional[float] = None) -> Spend:
        """What the agent's runs spent in each of its budget windows now
        (its day's and month's, when its budget bounds them; no window
        otherwise), with their ceilings and when each ends."""
        return self._run(_calls.spend(agent), call_timeout)

    # -- tasks and executions ---------------------------------------------

    def submit(self, agent: str, input: str, *, timeout: Optional[DurationLike] = None,
               traceparent: Optional[str] = None, tracestate: Optional[str] = None,
               call_timeout: Optional[float] = None, **fields: Any) -> Execution:
        """Submits a task and returns its execution at once (status
        "running" or "queued"). ``timeout`` is the run's budget (the
        agent's by default); ``traceparent``/``tracestate`` are sent as the
        W3C trace headers; other fields go into the request body as given.
        Raises AtCapacity when the agent has no free slot and does not
        queue (or its queue is full), BudgetSpent when one of its budget
        windows is spent (``retry_after``: the seconds until it reopens);
        both are Rejected."""
        return self._run(_calls.submit(agent, input, timeout, traceparent, tracestate, fields), call_timeout)

    def get(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """One execution, whole."""
        return self._run(_calls.get(id), call_timeout)

    def cancel(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """Cancels an execution: a queued one is cancelled at once, a
        running one is stopped gracefully (wait for its end). Conflict when
        it has already finished."""
        return self._run(_calls.cancel(id), call_timeout)

    def retry(self, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """Submits a finished execution's task again (trigger "retry");
        AtCapacity or BudgetSpent as for submit."""
        return self._run(_calls.retry(id), call_timeout)

    def webhooks(self, id: str, *, call_timeout: Optional[float] = None) -> list[WebhookDelivery]:
        """The webhook deliveries of the execution's events, oldest first:
        each one's status (pending, delivered, failed), attempts and the
        receiver's last answer."""
        return self._run(_calls.webhooks(id), call_timeout)

    def execution_page(self, *, agent: Optional[str] = None, status: Union[str, Sequence[str], None] = None,
                       since: Any = None, until: Any = None, limit: Optional[int] = None,
                       cursor: Optional[str] = None, call_timeout: Optional[float] = None) -> Page[Execution]:
        """One page of executions, newest first, as summaries."""
        return self._run(_calls.execution_page(agent, status, since, until, limit, cursor), call_timeout)

    def executions(self, *, agent: Optional[str] = None, status: Union[str, Sequence[str], None] = None,
                   since: Any = None, until: Any = None, page_size: Optional[int] = None,
                   call_timeout: Optional[float] = None) -> Iterator[Execution]:
        """Every execution that matches, newest first, as summaries (get
        one for its whole record), fetching page after page as the
        iteration goes. ``status`` is one status or several; ``since`` and
        ``until`` (on created_at) are datetimes or RFC 3339 strings."""
        cursor = None
        while True:
            page = self.execution_page(agent=agent, status=status, since=since, until=until,
                                       limit=page_size, cursor=cursor, call_timeout=call_timeout)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def follow(self, id: str, *, after: int = 0) -> Iterator[Event]:
        """The execution's events: a StatusEvent, its log from record
        after+1 as LogEvents, then EndEvent with the finished execution,
        where the iteration ends. A stream that breaks (the service
        restarted, the network failed) is opened again from the last record
        received, with Last-Event-ID, so each record comes once (with a new
        StatusEvent); after ``reconnect_for`` seconds without receiving
        anything it raises Unreachable."""
        return self._events(Resume(id, after, True, self.reconnect_for))

    def logs(self, id: str, *, after: int = 0) -> Iterator[Event]:
        """The execution's log as logged so far, without waiting: a
        StatusEvent, the LogEvents, then EndEvent (finished) or
        ReplayedEvent (not yet)."""
        return self._events(Resume(id, after, False, self.reconnect_for))

    def wait(self, id: str, timeout: Optional[float] = None, *, follow_retries: bool = True) -> Execution:
        """Waits for the run of execution ``id`` to finish and returns its
        last attempt: when an attempt ends and its agent retries it
        (``retried_by``), the wait follows the next attempt, through its
        backoff, as ``corral submit --wait`` does; ``follow_retries=False``
        returns the end of this attempt alone. Raises WaitTimeout (with the
        attempt as last seen) after ``timeout`` seconds for the whole run;
        None waits as long as it takes. Survives a restart of the service
        like follow."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            st = Resume(id, 0, True, self.reconnect_for, skip_logs=True)
            end = None
            with contextlib.closing(self._events(st, deadline)) as events:
                for ev in events:
                    if isinstance(ev, EndEvent):
                        end = ev.execution
                        break
            if end is None:
                raise _wait_timeout(st)  # unreachable: the stream ends with end
            if not follow_retries or not end.retried_by:
                return end
            id = end.retried_by

    # -- schedules ----------------------------------------------------------

    def schedule_page(self, agent: Optional[str] = None, *, limit: Optional[int] = None,
                      cursor: Optional[str] = None, call_timeout: Optional[float] = None) -> Page[Schedule]:
        """One page of schedules (one agent's, or every agent's), oldest first."""
        return self._run(_calls.schedule_page(agent, limit, cursor), call_timeout)

    def schedules(self, agent: Optional[str] = None, *, page_size: Optional[int] = None,
                  call_timeout: Optional[float] = None) -> Iterator[Schedule]:
        """Every schedule of agent (or of every agent), oldest first,
        fetching page after page as the iteration goes."""
        cursor = None
        while True:
            page = self.schedule_page(agent, limit=page_size, cursor=cursor, call_timeout=call_timeout)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> Schedule:
        """One schedule of agent."""
        return self._run(_calls.schedule(agent, id), call_timeout)

    def create_schedule(self, agent: str, cron: str, input: str, *, call_timeout: Optional[float] = None,
                        **fields: Any) -> Schedule:
        """Creates a schedule: cron has five fields, six with seconds, or is
        a descriptor (@hourly, @every 90s); fields: time_zone, timeout (the
        run's), enabled, missed ("skip" or "run_once")."""
        return self._run(_calls.create_schedule(agent, cron, input, fields), call_timeout)

    def update_schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None, **fields: Any) -> Schedule:
        """Changes the given fields of a schedule; its next fire is
        recomputed from now."""
        return self._run(_calls.update_schedule(agent, id, fields), call_timeout)

    def delete_schedule(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> None:
        """Deletes a schedule."""
        self._run(_calls.delete_schedule(agent, id), call_timeout)

    def trigger(self, agent: str, id: str, *, call_timeout: Optional[float] = None) -> Execution:
        """Runs a schedule's task now, enabled or not (trigger "schedule");
        AtCapacity or BudgetSpent as for submit."""
        return self._run(_calls.trigger(agent, id), call_timeout)


def _settimeout(sock: socket.socket, t: float) -> None:
    """Sets the timeout of the socket's next read, unless http.client has
    already handed the socket to the answer (an answer with "Connection:
    close"): the timeout set before then bounds each read."""
    try:
        sock.settimeout(t)
    except OSError:
        pass
