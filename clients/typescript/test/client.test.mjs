// The client against a real `corral serve`; at the end, every operation
// of docs/openapi.yaml must have been exercised.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import * as cc from "../dist/index.js";
import { Service } from "./service.mjs";
import { documentedOperations } from "./operations.mjs";
import { TURN_TOKENS, fakeClaude, receiver, signedBy } from "./hooks.mjs";

const seen = new Set();
const observer = (call) => seen.add(call.op);
let svc;
let n = 0;
const name = (base) => `${base}-${++n}`;
const client = (o = {}) => new cc.Client({ url: svc.url, token: svc.token, observer, ...o });

before(async () => {
  svc = new Service();
  await svc.start();
});

after(async () => {
  await svc.finish();
});

describe("against a real service", () => {
  test("health, ready and metrics", async () => {
    const c = client();
    assert.deepEqual(await c.health(), { status: "ok" });
    const r = await c.ready();
    assert.equal(r.ready, true);
    assert.ok(r.worker);
    assert.match(await c.metrics(), /corral_executions/);
  });

  test("agent lifecycle", async () => {
    const c = client();
    const a = name("agent");
    const got = await c.createAgent(a, "shell", { max_parallel_tasks: 2, timeout: 300, env: { TS_SECRET: "v" } });
    assert.equal(got.name, a);
    assert.equal(got.timeout, "5m0s");
    assert.deepEqual(got.env_names, ["TS_SECRET"]);
    assert.ok((await c.agents()).some((x) => x.name === a));
    assert.equal((await c.agent(a)).max_parallel_tasks, 2);
    const u = await c.updateAgent(a, { max_parallel_tasks: 3, env: { TS_SECRET: null, OTHER: "x" } });
    assert.equal(u.max_parallel_tasks, 3);
    assert.deepEqual(u.env_names, ["OTHER"]);
    assert.deepEqual(await c.slots(a), { agent: a, capacity: 3, used: 0, slots: [] });
    await c.deleteAgent(a);
    await assert.rejects(c.agent(a), cc.NotFound);
  });

  test("submit, follow, wait, get, logs", async () => {
    const c = client();
    const a = name("run");
    await c.createAgent(a, "shell");
    const e = await c.submit(a, "for i in 1 2 3; do echo line $i; sleep 0.2; done; echo oops >&2", {
      timeout: "30s", traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    assert.ok(["running", "queued"].includes(e.status));
    assert.equal(e.timeout, "30s");
    const events = [];
    for await (const ev of c.follow(e.id)) events.push(ev);
    assert.equal(events[0].type, "status");
    assert.equal(events.at(-1).type, "end");
    assert.equal(events.at(-1).execution.status, "succeeded");
    const logs = events.filter((ev) => ev.type === "log");
    assert.deepEqual(logs.filter((ev) => ev.stream === "stdout").map((ev) => ev.text), ["line 1", "line 2", "line 3"]);
    assert.deepEqual(logs.map((ev) => ev.seq), logs.map((_, i) => i + 1));
    const done = await c.wait(e.id, 60_000);
    assert.equal(done.exit_code, 0);
    const whole = await c.get(e.id);
    assert.equal(whole.stdout, "line 1\nline 2\nline 3\n");
    assert.equal(whole.stderr, "oops\n");
    const replay = [];
    for await (const ev of c.logs(e.id, { after: 2 })) replay.push(ev);
    assert.equal(replay.find((ev) => ev.type === "log").seq, 3);
    assert.equal(replay.at(-1).type, "end");
  });

  test("logs of a running execution end with replayed; a follow stops when its signal aborts", async () => {
    const c = client();
    const a = name("live");
    await c.createAgent(a, "shell");
    const e = await c.submit(a, "echo started; sleep 60");
    const ctl = new AbortController();
    const got = [];
    const reading = (async () => {
      for await (const ev of c.follow(e.id, { signal: ctl.signal })) {
        got.push(ev);
        if (ev.type === "log" && ev.text === "started") ctl.abort(new Error("enough"));
      }
    })();
    await assert.rejects(reading, /enough/);
    assert.ok(got.some((ev) => ev.type === "log" && ev.text === "started"));
    const replay = [];
    for await (const ev of c.logs(e.id)) replay.push(ev);
    assert.equal(replay.at(-1).type, "replayed");
    await c.cancel(e.id);
    assert.equal((await c.wait(e.id, 60_000)).status, "cancelled");
  });

  test("cancel, retry and conflict", async () => {
    const c = client();
    const a = name("cancel");
    await c.createAgent(a, "shell");
    const e = await c.submit(a, "sleep 60");
    assert.equal((await c.cancel(e.id)).id, e.id);
    const end = await c.wait(e.id, 60_000);
    assert.equal(end.status, "cancelled");
    await assert.rejects(c.cancel(e.id), (err) => err instanceof cc.Conflict && err.status === 409 && err.code === "conflict");
    const r = await c.retry(e.id);
    assert.equal(r.trigger, "retry");
    assert.equal(r.retry_of, e.id);
    await c.cancel(r.id);
    await c.wait(r.id, 60_000);
  });

  test("wait times out with the execution as last seen", async () => {
    const c = client();
    const a = name("wait");
    await c.createAgent(a, "shell");
    const e = await c.submit(a, "sleep 60");
    const t0 = Date.now();
    await assert.rejects(c.wait(e.id, 500), (err) => err instanceof cc.WaitTimeout && err instanceof cc.Timeout &&
      ["running", "queued"].includes(err.execution?.status) && /wait again, or cancel it/.test(err.message));
    assert.ok(Date.now() - t0 < 10_000);
    await c.cancel(e.id);
    await c.wait(e.id, 60_000);
  });

  // A task that fails its first attempt (exit 3) and passes its second, through a marker file
  // in a directory of the test's own, removed when the test ends.
  const flakyTask = (t) => {
    const dir = mkdtempSync(join(tmpdir(), "corral-ts-flaky-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const m = join(dir, "ran-once");
    return `if [ -e ${m} ]; then echo second; else touch ${m}; echo first; exit 3; fi`;
  };

  test("wait follows the run through its attempts", async (t) => {
    const c = client();
    const a = name("flaky");
    const agent = await c.createAgent(a, "shell", { max_attempts: 2, retry_on: ["exit"], retry_backoff: "200ms", retry_max_backoff: "1s", resume: false });
    assert.deepEqual([agent.max_attempts, agent.retry_on, agent.retry_backoff, agent.retry_max_backoff], [2, ["exit"], "200ms", "1s"]);
    const e = await c.submit(a, flakyTask(t));
    assert.equal(e.attempt, 1);
    assert.equal(e.max_attempts, 2);
    const done = await c.wait(e.id, 60_000);
    assert.equal(done.status, "succeeded");
    assert.equal(done.stdout, "second\n");
    assert.notEqual(done.id, e.id);
    assert.equal(done.attempt, 2);
    assert.equal(done.retry_of, e.id);
    assert.equal(done.trigger, "retry");
    assert.ok(done.retry_reason);
    assert.equal(done.retried_by, undefined);
    const first = await c.get(e.id);
    assert.equal(first.status, "failed");
    assert.equal(first.error_type, "exit");
    assert.equal(first.retried_by, done.id);
    assert.equal((await c.wait(e.id, 60_000, { followRetries: false })).id, e.id);
  });

  test("a waiting attempt is followed, within the wait's timeout", async (t) => {
    const c = client();
    const a = name("backoff");
    await c.createAgent(a, "shell", { max_attempts: 2, retry_on: ["exit"], retry_backoff: "30s" });
    const e = await c.submit(a, flakyTask(t));
    const err = await c.wait(e.id, 3000).then(() => null, (x) => x);
    assert.ok(err instanceof cc.WaitTimeout, String(err));
    assert.equal(err.execution?.status, "waiting");
    assert.equal(err.execution?.retry_of, e.id);
    assert.ok(err.execution?.next_attempt_at);
    await c.cancel(e.id); // cancels the run: its waiting attempt at once
    assert.equal((await c.wait(e.id, 60_000)).status, "cancelled");
  });

  test("executions iterates every page", async () => {
    const c = client();
    const a = name("pages");
    await c.createAgent(a, "shell", { max_parallel_tasks: 5 });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await c.submit(a, `echo ${i}`)).id);
    for (const id of ids) await c.wait(id, 60_000);
    const got = [];
    for await (const e of c.executions({ agent: a, pageSize: 2, since: new Date(Date.now() - 3600_000) })) got.push(e);
    assert.deepEqual(got.map((e) => e.id), [...ids].reverse());
    assert.ok(got.every((e) => e.summary));
    const none = [];
    for await (const e of c.executions({ agent: a, status: ["failed", "cancelled"], until: new Date(Date.now() + 3600_000).toISOString() })) none.push(e);
    assert.deepEqual(none, []);
    const page = await c.executionPage({ agent: a, pageSize: 2 });
    assert.equal(page.items.length, 2);
    assert.ok(page.next_cursor);
  });

  test("schedules: create, list, get, update, trigger, delete", async () => {
    const c = client();
    const a = name("sched");
    await c.createAgent(a, "shell");
    const s = await c.createSchedule(a, "@hourly", "echo scheduled", { time_zone: "Europe/Paris", enabled: false, missed: "run_once" });
    assert.match(s.id, /^sch_/);
    assert.equal(s.enabled, false);
    const s2 = await c.createSchedule(a, "0 9 * * 1-5", "echo two");
    const mine = [];
    for await (const x of c.schedules(a, { pageSize: 1 })) mine.push(x.id);
    assert.deepEqual(mine, [s.id, s2.id]);
    const all = [];
    for await (const x of c.schedules()) all.push(x.id);
    assert.ok(all.includes(s.id) && all.includes(s2.id));
    assert.equal((await c.schedule(a, s.id)).time_zone, "Europe/Paris");
    const u = await c.updateSchedule(a, s.id, { enabled: true, cron: "@daily", timeout: "20s" });
    assert.equal(u.enabled, true);
    assert.equal(u.timeout, "20s");
    const e = await c.trigger(a, s.id);
    assert.equal(e.trigger, "schedule");
    assert.equal(e.schedule_id, s.id);
    assert.equal((await c.wait(e.id, 60_000)).status, "succeeded");
    await c.deleteSchedule(a, s.id);
    await assert.rejects(c.schedule(a, s.id), cc.NotFound);
    assert.deepEqual((await c.schedulePage(a)).items.map((x) => x.id), [s2.id]);
  });

  test("capacity refusal says N/N", async () => {
    const c = client();
    const a = name("capacity");
    await c.createAgent(a, "shell", { max_parallel_tasks: 1 });
    const first = await c.submit(a, "sleep 60");
    const err = await c.submit(a, "true").then(() => assert.fail("a second task was admitted"), (e) => e);
    assert.ok(err instanceof cc.AtCapacity && err instanceof cc.APIError);
    assert.equal(err.status, 429);
    assert.equal(err.code, "at_capacity");
    assert.equal(err.running, 1);
    assert.equal(err.capacity, 1);
    assert.equal(err.execution.status, "rejected");
    assert.equal(err.retryAfter, undefined);
    assert.match(err.message, /1\/1.*overflow "queue"/);
    assert.equal((await c.slots(a)).slots[0].execution_id, first.id);
    await assert.rejects(c.deleteAgent(a), (e) => e instanceof cc.Conflict && e.code === "busy");
    await c.cancel(first.id);
    await c.wait(first.id, 60_000);
  });

  test("bad input is a BadRequest with the service's message", async () => {
    const c = client();
    const a = name("bad");
    await assert.rejects(c.createAgent(a, "nonsense"), (e) => e instanceof cc.BadRequest && e.code === "invalid" && /kind/.test(e.message));
    await c.createAgent(a, "shell");
    await assert.rejects(c.submit(a, ""), (e) => e instanceof cc.BadRequest && /input is empty/.test(e.serviceMessage));
    await assert.rejects(c.submit(a, "true", { labels: ["gpu"] }), /unknown field/);
    await assert.rejects(c.createSchedule(a, "not a cron", "x"), cc.BadRequest);
    await assert.rejects(c.createAgent(a, "shell"), (e) => e instanceof cc.Conflict && e.code === "exists");
    await assert.rejects(c.get("0".repeat(20)), cc.NotFound);
    assert.throws(() => c.submit(a, 42), TypeError);
  });

  test("the token comes from the argument, the environment or the data directory", async (t) => {
    const saved = { ...process.env };
    try {
      for (const k of ["CORRAL_TOKEN", "CORRAL_DATA", "CORRAL_ADDR", "XDG_DATA_HOME"]) delete process.env[k];
      await assert.rejects(new cc.Client({ url: svc.url, token: "wrong" }).agents(), (e) => e instanceof cc.Unauthorized && /CORRAL_TOKEN/.test(e.message));
      process.env.CORRAL_ADDR = svc.url.replace("http://", "");
      process.env.CORRAL_DATA = svc.data;
      assert.equal(await new cc.Client().tokenInUse(), svc.token);
      await new cc.Client().agents();
      delete process.env.CORRAL_DATA;
      assert.equal(await new cc.Client({ dataDir: svc.data }).tokenInUse(), svc.token);
      const xdg = mkdtempSync(join(tmpdir(), "corral-ts-xdg-"));
      t.after(() => rmSync(xdg, { recursive: true, force: true }));
      mkdirSync(join(xdg, "corral"));
      writeFileSync(join(xdg, "corral", "token"), svc.token + "\n");
      process.env.XDG_DATA_HOME = xdg;
      assert.equal(await new cc.Client().tokenInUse(), svc.token);
      process.env.CORRAL_TOKEN = "from-env";
      assert.equal(await new cc.Client().tokenInUse(), "from-env");
      assert.equal(await new cc.Client({ token: "from-arg" }).tokenInUse(), "from-arg");
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });

  test("an unreachable service and a silent one fail within the timeout", async () => {
    const { createServer } = await import("node:net");
    const sockets = [];
    const server = createServer((s) => sockets.push(s)); // accepts, never answers
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address();
    try {
      const t0 = Date.now();
      await assert.rejects(new cc.Client({ url: `127.0.0.1:${port}`, token: "t", timeoutMs: 500 }).health(),
        (e) => e instanceof cc.Timeout && /within 500 ms/.test(e.message));
      assert.ok(Date.now() - t0 < 5000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    }
    await assert.rejects(new cc.Client({ url: `127.0.0.1:${port}`, token: "t" }).health(),
      (e) => e instanceof cc.Unreachable && /is `corral serve` running/.test(e.message));
  });

  test("a spent daily window refuses tasks with BudgetSpent until it reopens; spend shows it", async (t) => {
    const c = client();
    const a = name("budget");
    const dir = mkdtempSync(join(tmpdir(), "corral-ts-budget-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const agent = await c.createAgent(a, "headless", {
      command: fakeClaude(dir), max_cost_usd: 50, max_tokens: 1e8, daily_tokens: 1, daily_cost_usd: 100,
      monthly_tokens: 1e9, monthly_cost_usd: 1000.5, budget_time_zone: "Europe/Paris", budget_overrun: "finish",
    });
    assert.deepEqual([agent.max_cost_usd, agent.max_tokens, agent.daily_tokens, agent.daily_cost_usd, agent.monthly_tokens, agent.monthly_cost_usd],
      [50, 1e8, 1, 100, 1e9, 1000.5]);
    assert.equal(agent.budget_time_zone, "Europe/Paris");
    assert.equal(agent.budget_overrun, "finish");
    // The run crosses the window at its first usage event and, as budget_overrun "finish" says, finishes.
    const done = await c.wait((await c.submit(a, "spend the day")).id, 60_000);
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    assert.equal(done.cost_estimated, true); // it reported no cost: corral priced its usage
    assert.ok(done.cost_usd > 0);
    const err = await c.submit(a, "one more").then(() => assert.fail("a task was admitted past the spent window"), (e) => e);
    assert.ok(err instanceof cc.BudgetSpent && err instanceof cc.Rejected && !(err instanceof cc.AtCapacity), String(err));
    assert.equal(err.status, 429);
    assert.equal(err.code, "budget_spent");
    assert.ok(err.retryAfter > 0 && err.retryAfter <= 25 * 3600, String(err.retryAfter));
    assert.equal(err.execution.status, "rejected");
    assert.equal(err.execution.error_type, "max_budget");
    assert.match(err.serviceMessage, /daily token budget is spent/);
    assert.ok(err.message.includes(`retry in ${err.retryAfter}s`), err.message);

    const spend = await c.spend(a);
    assert.equal(spend.agent, a);
    const day = spend.windows.find((w) => w.kind === "daily");
    const month = spend.windows.find((w) => w.kind === "monthly");
    assert.equal(spend.windows.length, 2);
    assert.match(day.key, /^day:.*@Europe\/Paris$/);
    assert.deepEqual([day.tokens, day.token_limit, day.cost_limit_usd], [TURN_TOKENS, 1, 100]);
    assert.ok(Math.abs(day.cost_usd - done.cost_usd) < 1e-9);
    assert.deepEqual([month.tokens, month.token_limit, month.cost_limit_usd], [TURN_TOKENS, 1e9, 1000.5]);
    const now = Date.now();
    assert.ok(Date.parse(day.start) <= now && now < Date.parse(day.end) && Date.parse(day.end) <= Date.parse(month.end));
    // Retry-After counts the seconds until the window ends (rounded up).
    assert.ok(Math.abs((Date.parse(day.end) - now) / 1000 - err.retryAfter) < 60);
    await assert.rejects(c.spend(a + "-nobody"), cc.NotFound);
    const plain = name("no-windows");
    await c.createAgent(plain, "shell", { max_tokens: 1000 });
    assert.deepEqual((await c.spend(plain)).windows, []);
  });

  // The execution's deliveries once there are n and all are delivered (within 60 s).
  const delivered = async (c, id, n) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ds = await c.webhooks(id);
      if (ds.length === n && ds.every((d) => d.status === "delivered")) return ds;
      assert.ok(Date.now() < deadline, `deliveries of ${id} after 60s: ${JSON.stringify(ds)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  test("a run is announced to its agent's webhooks, signed, and webhooks() shows the deliveries", async () => {
    const hooks = await receiver();
    try {
      const c = client();
      const a = name("hooked");
      const secrets = { "/all": "whsec-all", "/ends": "whsec-ends" };
      const agent = await c.createAgent(a, "shell", { webhooks: [
        { url: hooks.url + "/all", secret: secrets["/all"] },
        { url: hooks.url + "/ends", secret: secrets["/ends"], events: ["succeeded", "failed"] },
      ] });
      assert.deepEqual(agent.webhooks, [
        { url: hooks.url + "/all", secret_set: true },
        { url: hooks.url + "/ends", secret_set: true, events: ["succeeded", "failed"] },
      ]);
      const e = await c.submit(a, "echo hooked");
      assert.equal((await c.wait(e.id, 60_000)).status, "succeeded");
      const ds = await delivered(c, e.id, 3);
      const short = (d) => `${d.url.slice(hooks.url.length)} ${d.event}`;
      assert.deepEqual(ds.map(short).sort(), ["/all started", "/all succeeded", "/ends succeeded"]);
      assert.deepEqual(ds.filter((d) => d.url.endsWith("/all")).map((d) => d.event), ["started", "succeeded"]); // oldest first
      for (const d of ds) {
        assert.equal(d.execution_id, e.id);
        assert.equal(d.agent, a);
        assert.ok(d.attempts >= 1 && d.last_status === 204 && d.delivered_at && !d.next_at, JSON.stringify(d));
        const post = hooks.posts.find((p) => p.headers["corral-delivery"] === d.id);
        assert.ok(post, `the receiver never got delivery ${d.id}`);
        assert.equal(post.path, d.url.slice(hooks.url.length));
        assert.equal(post.headers["corral-event"], d.event);
        assert.ok(signedBy(secrets[post.path], post.headers, post.body), JSON.stringify(post.headers));
        const msg = JSON.parse(post.body.toString());
        assert.deepEqual([msg.event, msg.agent, msg.execution.id], [d.event, a, e.id]);
      }
      await assert.rejects(c.webhooks("0".repeat(20)), cc.NotFound);
    } finally {
      await hooks.close();
    }
  });

  test("a webhook's secret is write-only, and kept when the webhook is sent back", async () => {
    const hooks = await receiver();
    try {
      const c = client();
      const a = name("secret");
      const secret = `whsec-kept-${a}`;
      await c.createAgent(a, "shell", { webhooks: [{ url: hooks.url + "/hook", secret, events: ["succeeded"] }] });
      const got = await c.agent(a);
      assert.deepEqual(got.webhooks, [{ url: hooks.url + "/hook", secret_set: true, events: ["succeeded"] }]);
      assert.ok(!JSON.stringify(got).includes(secret) && !JSON.stringify(await c.agents()).includes(secret));
      // Sent back as the answer shows it (no secret): the secret is kept.
      const u = await c.updateAgent(a, { webhooks: got.webhooks, max_parallel_tasks: 2 });
      assert.deepEqual(u.webhooks, got.webhooks);
      const signedWith = async (s) => {
        const e = await c.submit(a, "true");
        assert.equal((await c.wait(e.id, 60_000)).status, "succeeded");
        const [d] = await delivered(c, e.id, 1);
        const post = hooks.posts.find((p) => p.headers["corral-delivery"] === d.id);
        return signedBy(s, post.headers, post.body);
      };
      assert.ok(await signedWith(secret), "the delivery after the update is not signed with the kept secret");
      // A new secret, sent, replaces it.
      await c.updateAgent(a, { webhooks: [{ url: hooks.url + "/hook", secret: "whsec-new", events: ["succeeded"] }] });
      assert.ok(await signedWith("whsec-new"));
    } finally {
      await hooks.close();
    }
  });
});

describe("a service of its own", () => {
  test("a follow survives a restart of the service", async () => {
    const own = new Service(["--shutdown-timeout", "2s"]);
    await own.start();
    try {
      const resumedFrom = [];
      const c = new cc.Client({
        url: own.url, token: own.token, reconnectForMs: 120_000,
        observer: (call) => { seen.add(call.op); const h = call.headers?.["Last-Event-ID"]; if (h) resumedFrom.push(Number(h)); },
      });
      const a = name("restart");
      await c.createAgent(a, "shell");
      const lines = 640; // 640 lines of 50 kB: 32 MB, more than the loopback buffers hold
      const e = await c.submit(a, `s=$(head -c 50000 /dev/zero | tr '\\0' x); for i in $(seq ${lines}); do echo "$i $s"; done`);
      const stream = c.follow(e.id);
      const seqs = [];
      const outs = [];
      for (;;) {
        const { value: ev } = await stream.next();
        if (ev.type === "log") {
          seqs.push(ev.seq);
          if (ev.stream === "stdout") outs.push(Number(ev.text.split(" ")[0]));
          if (outs.length === 3) break;
        }
      }
      assert.equal((await c.wait(e.id, 120_000)).status, "succeeded");
      await own.stop();
      await own.start();
      let last;
      for (let r = await stream.next(); !r.done; r = await stream.next()) {
        const ev = r.value;
        if (ev.type === "log") {
          seqs.push(ev.seq);
          if (ev.stream === "stdout") outs.push(Number(ev.text.split(" ")[0]));
        }
        last = ev;
      }
      assert.equal(last.type, "end");
      assert.equal(last.execution.status, "succeeded");
      assert.deepEqual(outs, Array.from({ length: lines }, (_, i) => i + 1), "a line was lost or repeated across the restart");
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1));
      const resumed = resumedFrom.filter((r) => seqs.includes(r));
      assert.ok(resumed.length > 0 && resumed[0] > 3, `resumed from ${resumedFrom}`);
    } finally {
      await own.finish();
    }
  });
});

test("every documented operation has a method, and the tests exercised each", () => {
  const ops = documentedOperations();
  assert.ok(ops.size >= 20, `read only ${ops.size} operations`);
  assert.deepEqual([...Object.keys(cc.OPERATIONS)].sort(), [...ops].sort());
  for (const [op, method] of Object.entries(cc.OPERATIONS)) {
    assert.equal(typeof cc.Client.prototype[method], "function", `Client has no ${method} for ${op}`);
  }
  const missing = [...ops].filter((op) => !seen.has(op));
  assert.deepEqual(missing, [], `no test exercised ${missing}`);
});
