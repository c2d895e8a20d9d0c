"""The asyncio client against a real `corral serve`: the same surface,
and a follow that a cancelled task stops at once."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

import corral_client as cc
from conftest import Service


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_async_client_covers_the_api(service: Service, name: str) -> None:
    async def main() -> None:
        async with service.async_client() as c:
            assert await c.health() == {"status": "ok"}
            assert (await c.ready()).ready
            assert "corral_" in await c.metrics()
            a = await c.create_agent(name, "shell", max_parallel_tasks=1, grace="1s")
            assert a.grace == "1s" and name in [x.name for x in await c.agents()]
            assert (await c.agent(name)).kind == "shell"
            assert (await c.update_agent(name, max_parallel_tasks=2)).max_parallel_tasks == 2
            e = await c.submit(name, "echo one; echo two", timeout=30,
                               traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
            texts = [ev.text async for ev in c.follow(e.id) if isinstance(ev, cc.LogEvent) and ev.stream == "stdout"]
            assert texts == ["one", "two"]
            done = await c.wait(e.id, timeout=60)
            assert done.succeeded and (await c.get(e.id)).stdout == "one\ntwo\n"
            replay = [ev async for ev in c.logs(e.id)]
            assert isinstance(replay[0], cc.StatusEvent) and isinstance(replay[-1], cc.EndEvent)
            assert [x.id async for x in c.executions(agent=name, page_size=1)] == [e.id]
            assert len((await c.execution_page(agent=name)).items) == 1
            r = await c.retry(e.id)
            assert r.retry_of == e.id and (await c.wait(r.id, timeout=60)).succeeded
            long = await c.submit(name, "sleep 60")
            assert (await c.slots(name)).used >= 1
            await c.cancel(long.id)
            assert (await c.wait(long.id, timeout=60)).status == "cancelled"
            s = await c.create_schedule(name, "@hourly", "echo s", enabled=False)
            assert [x.id async for x in c.schedules(name)] == [s.id]
            assert s.id in [x.id async for x in c.schedules()]
            assert (await c.schedule(name, s.id)).input == "echo s"
            assert (await c.update_schedule(name, s.id, input="echo t")).input == "echo t"
            t = await c.trigger(name, s.id)
            assert (await c.wait(t.id, timeout=60)).stdout == "t\n"
            await c.delete_schedule(name, s.id)
            assert (await c.schedule_page(name)).items == []
            await c.delete_agent(name)
            with pytest.raises(cc.NotFound):
                await c.agent(name)
    run(main())


def test_async_errors_match_the_blocking_client(service: Service, name: str) -> None:
    async def main() -> None:
        c = service.async_client()
        await c.create_agent(name, "shell", max_parallel_tasks=1)
        first = await c.submit(name, "sleep 60")
        with pytest.raises(cc.AtCapacity) as err:
            await c.submit(name, "true")
        assert (err.value.running, err.value.capacity) == (1, 1)
        with pytest.raises(cc.BadRequest, match="input is empty"):
            await c.submit(name, "")
        with pytest.raises(cc.Unauthorized):
            await cc.AsyncClient(service.url, "wrong").agents()
        with pytest.raises(cc.WaitTimeout) as wt:
            await c.wait(first.id, timeout=0.5)
        assert wt.value.execution is not None
        await c.cancel(first.id)
        await c.wait(first.id, timeout=60)
        with pytest.raises(cc.Unreachable):
            await cc.AsyncClient("127.0.0.1:1", "t").health()
    run(main())


def test_a_cancelled_follow_stops_at_once(service: Service, name: str) -> None:
    async def main() -> None:
        c = service.async_client()
        await c.create_agent(name, "shell")
        e = await c.submit(name, "echo started; sleep 60")
        got: list[cc.Event] = []

        async def follow() -> None:
            async with contextlib.aclosing(c.follow(e.id)) as events:
                async for ev in events:
                    got.append(ev)
        task = asyncio.create_task(follow())
        while not any(isinstance(ev, cc.LogEvent) and ev.text == "started" for ev in got):
            assert not task.done(), task
            await asyncio.sleep(0.05)
        t0 = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - t0 < 5  # at once; generous for a loaded machine
        await c.cancel(e.id)
        assert (await c.wait(e.id, timeout=60)).status == "cancelled"
    run(main())


def test_async_follow_survives_a_restart_of_the_service(own_service: Service, name: str) -> None:
    async def main() -> None:
        c = own_service.async_client(reconnect_for=120)
        await c.create_agent(name, "shell")
        lines = 640
        e = await c.submit(name, f"s=$(head -c 50000 /dev/zero | tr '\\0' x); for i in $(seq {lines}); do echo \"$i $s\"; done")
        events = c.follow(e.id)
        outs: list[int] = []
        async for ev in events:
            if isinstance(ev, cc.LogEvent) and ev.stream == "stdout":
                outs.append(int(ev.text.split()[0]))
                if len(outs) == 3:
                    break
        assert (await c.wait(e.id, timeout=120)).succeeded
        await asyncio.to_thread(own_service.stop)
        await asyncio.to_thread(own_service.start)
        last = None
        async for ev in events:
            if isinstance(ev, cc.LogEvent) and ev.stream == "stdout":
                outs.append(int(ev.text.split()[0]))
            last = ev
        assert isinstance(last, cc.EndEvent)
        assert outs == list(range(1, lines + 1))
    run(main())


def test_async_wait_follows_the_run_through_its_attempts(service: Service, name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    m = tmp_path / "ran-once"

    async def main() -> None:
        async with service.async_client() as c:
            await c.create_agent(name, "shell", max_attempts=2, retry_on=["exit"], retry_backoff="200ms")
            e = await c.submit(name, f"if [ -e {m} ]; then echo second; else touch {m}; exit 3; fi")
            done = await c.wait(e.id, timeout=60)
            assert done.succeeded and done.attempt == 2 and done.retry_of == e.id and done.stdout == "second\n"
            assert (await c.wait(e.id, timeout=60, follow_retries=False)).retried_by == done.id
    run(main())


def test_async_spend_webhooks_and_budget_spent(service: Service, name: str, tmp_path, receiver) -> None:  # type: ignore[no-untyped-def]
    from conftest import TURN_TOKENS, fake_claude, signed_by

    async def main() -> None:
        async with service.async_client() as c:
            await c.create_agent(name, "headless", command=fake_claude(tmp_path), daily_tokens=1, budget_overrun="finish",
                                 webhooks=[cc.Webhook(url=receiver.url, secret="whsec-async", events=["succeeded"])])
            e = await c.submit(name, "spend the day")
            assert (await c.wait(e.id, timeout=60)).succeeded
            with pytest.raises(cc.BudgetSpent) as err:
                await c.submit(name, "one more")
            assert err.value.retry_after and err.value.retry_after > 0 and err.value.execution is not None
            (day,) = (await c.spend(name)).windows
            assert (day.kind, day.tokens, day.token_limit) == ("daily", TURN_TOKENS, 1)
            deadline = time.monotonic() + 60
            while not ((ds := await c.webhooks(e.id)) and ds[0].status == "delivered"):
                assert time.monotonic() < deadline, ds
                await asyncio.sleep(0.1)
            assert [(d.event, d.last_status) for d in ds] == [("succeeded", 204)]
            (path, h, body), = receiver.received()
            assert h["corral-delivery"] == ds[0].id and signed_by("whsec-async", h, body)
    run(main())
