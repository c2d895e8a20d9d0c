"""The blocking client against a real `corral serve`."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import corral_client as cc
from conftest import Service


def test_health_ready_and_metrics(client: cc.Client) -> None:
    assert client.health() == {"status": "ok"}
    r = client.ready()
    assert r.ready and r.status == "ready" and r.worker
    assert "corral_executions" in client.metrics()


def test_agent_lifecycle(client: cc.Client, name: str) -> None:
    a = client.create_agent(name, "shell", max_parallel_tasks=2, timeout=timedelta(minutes=5),
                            env={"PY_SECRET": "v"}, labels=None)
    assert isinstance(a, cc.Agent) and a.name == name and a.kind == "shell"
    assert a.max_parallel_tasks == 2 and a.timeout == "5m0s" and a.env_names == ["PY_SECRET"]
    assert a.created_at.tzinfo is not None and a.raw["name"] == name
    assert name in [x.name for x in client.agents()]
    assert client.agent(name).max_parallel_tasks == 2
    b = client.update_agent(name, max_parallel_tasks=3, env={"PY_SECRET": None, "OTHER": "x"})
    assert b.max_parallel_tasks == 3 and b.env_names == ["OTHER"]
    s = client.slots(name)
    assert (s.agent, s.capacity, s.used, s.slots) == (name, 3, 0, [])
    client.delete_agent(name)
    with pytest.raises(cc.NotFound):
        client.agent(name)


def test_submit_wait_get_and_logs(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    e = client.submit(name, "echo hello; echo oops >&2", timeout="30s",
                      traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    assert isinstance(e, cc.Execution) and e.status in ("running", "queued") and e.timeout == "30s"
    done = client.wait(e.id, timeout=60)
    assert done.finished and done.succeeded and done.exit_code == 0
    got = client.get(e.id)
    assert got.stdout == "hello\n" and got.stderr == "oops\n" and got.finished_at is not None
    events = list(client.logs(e.id))
    assert isinstance(events[0], cc.StatusEvent) and isinstance(events[-1], cc.EndEvent)
    texts = [ev.text for ev in events if isinstance(ev, cc.LogEvent)]
    assert "hello" in texts and "oops" in texts
    later = list(client.logs(e.id, after=2))
    assert [ev.seq for ev in later if isinstance(ev, cc.LogEvent)][0] == 3


def test_follow_streams_a_live_run_to_its_end(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    e = client.submit(name, "for i in 1 2 3; do echo line $i; sleep 0.2; done")
    events = list(client.follow(e.id))
    lines = [ev.text for ev in events if isinstance(ev, cc.LogEvent) and ev.stream == "stdout"]
    assert lines == ["line 1", "line 2", "line 3"]
    assert isinstance(events[-1], cc.EndEvent) and events[-1].execution.succeeded
    seqs = [ev.seq for ev in events if isinstance(ev, cc.LogEvent)]
    assert seqs == list(range(1, len(seqs) + 1))


def test_logs_of_a_running_execution_end_with_replayed(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    e = client.submit(name, "echo started; sleep 30")
    deadline = time.monotonic() + 30
    while not any(isinstance(ev, cc.LogEvent) and ev.text == "started" for ev in client.logs(e.id)):
        assert time.monotonic() < deadline, "the run never logged its first line"
        time.sleep(0.1)
    assert isinstance(list(client.logs(e.id))[-1], cc.ReplayedEvent)
    client.cancel(e.id)
    assert client.wait(e.id, timeout=60).status == "cancelled"


def test_cancel_retry_and_conflict(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    e = client.submit(name, "sleep 60")
    c = client.cancel(e.id)
    assert c.id == e.id
    end = client.wait(e.id, timeout=60)
    assert end.status == "cancelled" and end.error_type == "cancelled"
    with pytest.raises(cc.Conflict) as err:
        client.cancel(e.id)
    assert err.value.status == 409 and err.value.code == "conflict"
    r = client.retry(e.id)
    assert r.trigger == "retry" and r.retry_of == e.id and r.attempt == 2
    client.cancel(r.id)
    client.wait(r.id, timeout=60)


def test_wait_times_out_with_the_execution_as_last_seen(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    e = client.submit(name, "sleep 60")
    t0 = time.monotonic()
    with pytest.raises(cc.WaitTimeout) as err:
        client.wait(e.id, timeout=0.5)
    assert time.monotonic() - t0 < 10
    assert err.value.execution is not None and err.value.execution.status in ("running", "queued")
    assert "wait again, or cancel it" in str(err.value)
    client.cancel(e.id)
    client.wait(e.id, timeout=60)


def flaky_task(tmp_path: Path) -> str:
    """A task that fails its first attempt (exit 3) and passes its second,
    through a marker file."""
    m = tmp_path / "ran-once"
    return f"if [ -e {m} ]; then echo second; else touch {m}; echo first; exit 3; fi"


def test_wait_follows_the_run_through_its_attempts(client: cc.Client, name: str, tmp_path: Path) -> None:
    a = client.create_agent(name, "shell", max_attempts=2, retry_on=["exit"], retry_backoff="200ms",
                            retry_max_backoff="1s", resume=False)
    assert (a.max_attempts, a.retry_on, a.retry_backoff, a.retry_max_backoff) == (2, ["exit"], "200ms", "1s")
    e = client.submit(name, flaky_task(tmp_path))
    assert e.attempt == 1 and e.max_attempts == 2
    done = client.wait(e.id, timeout=60)
    assert done.succeeded and done.run_finished and done.stdout == "second\n"
    assert done.id != e.id and done.attempt == 2 and done.retry_of == e.id and done.trigger == "retry"
    assert done.retry_reason and done.chain_cost_usd is None and done.survivors is None
    first = client.get(e.id)
    assert first.status == "failed" and first.error_type == "exit" and first.retried_by == done.id
    assert first.finished and not first.run_finished
    # One attempt alone, when asked.
    assert client.wait(e.id, timeout=60, follow_retries=False).id == e.id


def test_a_waiting_attempt_is_followed_and_bounded_by_the_wait(client: cc.Client, name: str, tmp_path: Path) -> None:
    client.create_agent(name, "shell", max_attempts=2, retry_on=["exit"], retry_backoff="30s")
    e = client.submit(name, flaky_task(tmp_path))
    with pytest.raises(cc.WaitTimeout) as err:
        client.wait(e.id, timeout=3)
    nxt = err.value.execution
    assert nxt is not None and nxt.retry_of == e.id and nxt.status == "waiting"
    assert nxt.next_attempt_at is not None and nxt.next_attempt_at.tzinfo is not None
    client.cancel(e.id)  # cancels the run: its waiting attempt at once
    assert client.wait(e.id, timeout=60).status == "cancelled"


def test_executions_iterates_every_page(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell", max_parallel_tasks=5)
    ids = [client.submit(name, f"echo {i}").id for i in range(5)]
    for i in ids:
        client.wait(i, timeout=60)
    since = datetime.now(timezone.utc) - timedelta(hours=1)
    got = list(client.executions(agent=name, page_size=2, since=since))
    assert [e.id for e in got] == list(reversed(ids)) and all(e.summary for e in got)
    assert list(client.executions(agent=name, status=["failed", "cancelled"])) == []
    page = client.execution_page(agent=name, limit=2)
    assert len(page.items) == 2 and page.next_cursor
    assert [e.id for e in client.executions(agent=name, status="succeeded", until=datetime.now(timezone.utc) + timedelta(hours=1))] == list(reversed(ids))


def test_schedules_crud_and_trigger(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell")
    s = client.create_schedule(name, "@hourly", "echo scheduled", time_zone="Europe/Paris", enabled=False, missed="run_once")
    assert isinstance(s, cc.Schedule) and s.id.startswith("sch_") and not s.enabled and s.missed == "run_once"
    s2 = client.create_schedule(name, "0 9 * * 1-5", "echo two")
    assert [x.id for x in client.schedules(name, page_size=1)] == [s.id, s2.id]
    assert {s.id, s2.id} <= {x.id for x in client.schedules()}
    assert client.schedule(name, s.id).time_zone == "Europe/Paris"
    u = client.update_schedule(name, s.id, enabled=True, cron="@daily", timeout="20s")
    assert u.enabled and u.cron == "@daily" and u.timeout == "20s" and u.next_fire_at is not None
    e = client.trigger(name, s.id)
    assert e.trigger == "schedule" and e.schedule_id == s.id
    assert client.wait(e.id, timeout=60).succeeded
    client.delete_schedule(name, s.id)
    with pytest.raises(cc.NotFound):
        client.schedule(name, s.id)
    assert [x.id for x in client.schedules(name)] == [s2.id]


def test_capacity_refusal_says_n_of_n(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell", max_parallel_tasks=1)
    first = client.submit(name, "sleep 60")
    with pytest.raises(cc.AtCapacity) as err:
        client.submit(name, "true")
    e = err.value
    assert (e.status, e.code, e.running, e.capacity) == (429, "at_capacity", 1, 1)
    assert e.execution is not None and e.execution.status == "rejected"
    assert e.retry_after is None and "1/1" in str(e) and "overflow=\"queue\"" in str(e)
    assert client.slots(name).slots[0].execution_id == first.id
    with pytest.raises(cc.Conflict) as busy:
        client.delete_agent(name)
    assert busy.value.code == "busy"
    client.cancel(first.id)
    client.wait(first.id, timeout=60)


def test_a_full_queue_is_refused_with_its_size(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell", max_parallel_tasks=1, overflow="queue", max_backlog=1)
    run = client.submit(name, "sleep 60")
    queued = client.submit(name, "true")
    assert queued.status == "queued"
    with pytest.raises(cc.AtCapacity) as err:
        client.submit(name, "true")
    assert (err.value.running, err.value.capacity, err.value.queued, err.value.max_backlog) == (1, 1, 1, 1)
    for e in (queued, run):
        client.cancel(e.id)
        client.wait(e.id, timeout=60)


def test_bad_input_is_a_bad_request_with_the_service_message(client: cc.Client, name: str) -> None:
    with pytest.raises(cc.BadRequest) as err:
        client.create_agent(name, "nonsense")
    assert err.value.status == 400 and err.value.code == "invalid" and "kind" in err.value.message
    client.create_agent(name, "shell")
    with pytest.raises(cc.BadRequest, match="input is empty"):
        client.submit(name, "")
    with pytest.raises(cc.BadRequest, match="unknown field"):
        client.submit(name, "true", labels=["gpu"])
    with pytest.raises(cc.BadRequest):
        client.create_schedule(name, "not a cron", "x")
    with pytest.raises(cc.Conflict) as dup:
        client.create_agent(name, "shell")
    assert dup.value.code == "exists"
    with pytest.raises(cc.NotFound):
        client.get("0" * 20)
    with pytest.raises(TypeError):
        client.submit(name, b"bytes")  # type: ignore[arg-type]


def test_token_comes_from_the_argument_the_environment_or_the_data_directory(
        service: Service, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for k in ("CORRAL_TOKEN", "CORRAL_DATA", "CORRAL_ADDR", "XDG_DATA_HOME"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(cc.Unauthorized) as err:
        cc.Client(service.url, "wrong").agents()
    assert "CORRAL_TOKEN" in str(err.value)
    monkeypatch.setenv("CORRAL_ADDR", service.url.removeprefix("http://"))
    monkeypatch.setenv("CORRAL_DATA", str(service.data))
    assert cc.Client().token == service.token
    cc.Client().agents()
    monkeypatch.delenv("CORRAL_DATA")
    assert cc.Client(data_dir=service.data).token == service.token
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    (tmp_path / "corral").mkdir()
    (tmp_path / "corral" / "token").write_text(service.token + "\n")
    assert cc.Client().token == service.token
    monkeypatch.setenv("CORRAL_TOKEN", "from-env")
    assert cc.Client().token == "from-env"
    assert cc.Client(token="from-arg").token == "from-arg"


def test_an_unreachable_service_and_a_slow_one_fail_within_the_timeout() -> None:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(cc.Unreachable, match="is `corral serve` running"):
            cc.Client(f"127.0.0.1:{port}", "t").health()
        s.listen(1)  # accepts, never answers
        t0 = time.monotonic()
        with pytest.raises(cc.Timeout, match="within 0.5s"):
            cc.Client(f"127.0.0.1:{port}", "t", timeout=0.5).health()
        assert time.monotonic() - t0 < 5


def test_follow_survives_a_restart_of_the_service(own_service: Service, name: str) -> None:
    """The follow reads a few records, the service is stopped while the rest
    of the log waits unread (more than the sockets buffer), and started
    again on the same port and data directory: the follow opens the stream
    again with Last-Event-ID and receives every record once, in order."""
    sent: list[dict[str, str]] = []

    def observer(call: cc._core.Call) -> None:
        if call.op == "executionEvents":
            sent.append(dict(call.headers))
    c = cc.Client(own_service.url, own_service.token, observer=observer, reconnect_for=120)
    c.create_agent(name, "shell")
    lines = 640  # 640 lines of 50 kB: 32 MB, more than the loopback buffers hold
    e = c.submit(name, f"s=$(head -c 50000 /dev/zero | tr '\\0' x); for i in $(seq {lines}); do echo \"$i $s\"; done")
    stream = c.follow(e.id)
    seqs, outs = [], []
    for ev in stream:
        if isinstance(ev, cc.LogEvent):
            seqs.append(ev.seq)
            if ev.stream == "stdout":
                outs.append(int(ev.text.split()[0]))
                if len(outs) == 3:
                    break
    assert c.wait(e.id, timeout=120).succeeded  # the whole log is written; the follow has read 3 lines
    own_service.stop()
    own_service.start()
    statuses = 0
    for ev in stream:
        if isinstance(ev, cc.LogEvent):
            seqs.append(ev.seq)
            if ev.stream == "stdout":
                outs.append(int(ev.text.split()[0]))
        elif isinstance(ev, cc.StatusEvent):
            statuses += 1
        last = ev
    assert isinstance(last, cc.EndEvent) and last.execution.succeeded
    assert outs == list(range(1, lines + 1)), "a line was lost or repeated across the restart"
    assert seqs == list(range(1, len(seqs) + 1))
    total = [ev.seq for ev in c.logs(e.id) if isinstance(ev, cc.LogEvent)]
    assert seqs == total
    # The follow's reopenings (wait asks for the records past the log's end).
    resumed = [int(h["Last-Event-ID"]) for h in sent if int(h.get("Last-Event-ID", "0")) in seqs]
    assert statuses >= 1 and resumed, "the stream was never opened again with Last-Event-ID"
    assert resumed[0] > 3, f"resumed from {resumed}"


def test_a_follow_gives_up_when_the_service_stays_away(own_service: Service, name: str) -> None:
    c = cc.Client(own_service.url, own_service.token, reconnect_for=1.5)
    c.create_agent(name, "shell")
    e = c.submit(name, "sleep 60")
    stream = c.follow(e.id)
    assert isinstance(next(stream), cc.StatusEvent)
    killer = threading.Timer(0.3, own_service.stop, kwargs={"sig": signal.SIGKILL})
    killer.start()
    t0 = time.monotonic()
    with pytest.raises(cc.Unreachable, match="could not be opened again"):
        list(stream)
    killer.join()
    assert time.monotonic() - t0 < 30


def test_the_package_keeps_its_version_and_types() -> None:
    import corral_client
    assert corral_client.__version__
    assert (Path(corral_client.__file__).parent / "py.typed").is_file()
    assert os.path.basename(os.path.dirname(corral_client.__file__)) == "corral_client"
