"""Budgets and webhooks against a real `corral serve`: a run that spends
its agent's daily window, the refusal that follows (BudgetSpent, with
Retry-After) and the spend that shows it; a webhook's deliveries to a
receiver on loopback, signed with its write-only secret, which an update
that sends the webhook back keeps."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

import corral_client as cc
from conftest import TURN_TOKENS, Receiver, fake_claude, signed_by


def test_a_spent_daily_window_refuses_tasks_until_it_reopens(client: cc.Client, name: str, tmp_path: Path) -> None:
    a = client.create_agent(name, "headless", command=fake_claude(tmp_path), max_cost_usd=50, max_tokens=10**8,
                            daily_tokens=1, daily_cost_usd=100, monthly_tokens=10**9, monthly_cost_usd=1000.5,
                            budget_time_zone="Europe/Paris", budget_overrun="finish")
    assert (a.max_cost_usd, a.max_tokens, a.daily_tokens, a.daily_cost_usd, a.monthly_tokens, a.monthly_cost_usd) == (
        50, 10**8, 1, 100, 10**9, 1000.5)
    assert (a.budget_time_zone, a.budget_overrun, a.webhooks) == ("Europe/Paris", "finish", None)
    # The run crosses the window at its first usage event and, as
    # budget_overrun "finish" says, finishes.
    done = client.wait(client.submit(name, "spend the day").id, timeout=60)
    assert done.succeeded and done.result == "Spent.", done
    assert done.cost_estimated is True and done.cost_usd and done.cost_usd > 0  # it reported no cost: corral priced it
    with pytest.raises(cc.BudgetSpent) as err:
        client.submit(name, "one more")
    b = err.value
    assert isinstance(b, cc.Rejected) and not isinstance(b, cc.AtCapacity)
    assert (b.status, b.code) == (429, "budget_spent")
    assert b.retry_after is not None and 0 < b.retry_after <= 25 * 3600, b.retry_after
    assert b.execution is not None and b.execution.status == "rejected" and b.execution.error_type == "max_budget"
    assert "daily token budget is spent" in b.message and f"retry in {b.retry_after:g}s" in str(b)

    spend = client.spend(name)
    assert isinstance(spend, cc.Spend) and spend.agent == name
    windows = {w.kind: w for w in spend.windows}
    assert set(windows) == {"daily", "monthly"}, spend
    day, month = windows["daily"], windows["monthly"]
    assert isinstance(day, cc.WindowSpend) and day.key.startswith("day:") and day.key.endswith("@Europe/Paris")
    assert (day.tokens, day.token_limit, day.cost_limit_usd) == (TURN_TOKENS, 1, 100)
    assert day.cost_usd == pytest.approx(done.cost_usd)
    assert (month.tokens, month.token_limit, month.cost_limit_usd) == (TURN_TOKENS, 10**9, 1000.5)
    now = datetime.now(timezone.utc)
    assert day.start <= now < day.end and month.start <= day.start and day.end <= month.end
    # Retry-After counts the seconds until the window ends (rounded up).
    assert abs((day.end - now).total_seconds() - b.retry_after) < 60
    with pytest.raises(cc.NotFound):
        client.spend(name + "-nobody")


def test_an_agent_without_day_or_month_budgets_has_no_windows(client: cc.Client, name: str) -> None:
    client.create_agent(name, "shell", max_tokens=1000)
    assert client.spend(name).windows == []


def deliveries(client: cc.Client, id: str, n: int) -> list[cc.WebhookDelivery]:
    """The execution's deliveries once there are n and all are delivered
    (within 60 s: each is tried at once, a receiver that answers 204 takes
    them on the first attempt)."""
    deadline = time.monotonic() + 60
    while True:
        ds = client.webhooks(id)
        if len(ds) == n and all(d.status == "delivered" for d in ds):
            return ds
        assert time.monotonic() < deadline, f"deliveries of {id} after 60s: {ds}"
        time.sleep(0.1)


def test_a_run_is_announced_to_its_agents_webhooks(client: cc.Client, name: str, receiver: Receiver) -> None:
    secrets = {"/all": "whsec-all", "/ends": "whsec-ends"}
    a = client.create_agent(name, "shell", webhooks=[
        cc.Webhook(url=receiver.url + "/all", secret=secrets["/all"]),
        cc.Webhook(url=receiver.url + "/ends", secret=secrets["/ends"], events=["succeeded", "failed"])])
    assert a.webhooks == [cc.Webhook(url=receiver.url + "/all", secret_set=True),
                          cc.Webhook(url=receiver.url + "/ends", secret_set=True, events=["succeeded", "failed"])]
    e = client.submit(name, "echo hooked")
    assert client.wait(e.id, timeout=60).succeeded
    ds = deliveries(client, e.id, 3)
    assert sorted((d.url.removeprefix(receiver.url), d.event) for d in ds) == [
        ("/all", "started"), ("/all", "succeeded"), ("/ends", "succeeded")]
    assert [d.event for d in ds if d.url.endswith("/all")] == ["started", "succeeded"]  # oldest first
    for d in ds:
        assert isinstance(d, cc.WebhookDelivery) and (d.execution_id, d.agent) == (e.id, name)
        assert d.attempts >= 1 and d.last_status == 204 and d.delivered_at is not None and d.next_at is None
        assert d.created_at <= d.delivered_at
    # What the receiver got: each delivery, signed with its webhook's secret.
    got = {h["corral-delivery"]: (path, h, body) for path, h, body in receiver.received()}
    for d in ds:
        path, h, body = got[d.id]
        assert path == d.url.removeprefix(receiver.url) and h["corral-event"] == d.event
        assert signed_by(secrets[path], h, body), h
        msg = json.loads(body)
        assert (msg["event"], msg["agent"], msg["execution"]["id"]) == (d.event, name, e.id)
    with pytest.raises(cc.NotFound):
        client.webhooks("0" * 20)


def test_a_webhook_secret_is_write_only_and_kept_when_sent_back(client: cc.Client, name: str,
                                                                receiver: Receiver) -> None:
    secret = "whsec-kept-" + name
    client.create_agent(name, "shell", webhooks=[cc.Webhook(url=receiver.url + "/hook", secret=secret,
                                                            events=["succeeded"])])
    got = client.agent(name)
    (w,) = got.webhooks or []
    assert (w.secret, w.secret_set, w.events) == (None, True, ["succeeded"])
    assert "secret" not in got.raw["webhooks"][0] and secret not in json.dumps(got.raw)
    assert secret not in json.dumps([x.raw for x in client.agents()])
    # Sent back as the answer shows it (no secret): the secret is kept.
    u = client.update_agent(name, webhooks=got.webhooks, max_parallel_tasks=2)
    assert u.webhooks == got.webhooks and u.max_parallel_tasks == 2
    e = client.submit(name, "true")
    assert client.wait(e.id, timeout=60).succeeded
    (d,) = deliveries(client, e.id, 1)
    (path, h, body), = [p for p in receiver.received() if p[1]["corral-delivery"] == d.id]
    assert signed_by(secret, h, body), "the delivery after the update is not signed with the kept secret"
    # A new secret, sent, replaces it.
    client.update_agent(name, webhooks=[cc.Webhook(url=receiver.url + "/hook", secret="whsec-new", events=["succeeded"])])
    e = client.submit(name, "true")
    assert client.wait(e.id, timeout=60).succeeded
    (d,) = deliveries(client, e.id, 1)
    (path, h, body), = [p for p in receiver.received() if p[1]["corral-delivery"] == d.id]
    assert signed_by("whsec-new", h, body) and not signed_by(secret, h, body)
