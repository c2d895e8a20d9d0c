// Conformance checks of corral mcp with the official MCP TypeScript SDK
// client, run by conformance_test.go. Usage:
//
//   node client.mjs MODE [URL]
//
// The environment names the pinned npm tools (CORRAL_NPM_DIR, the
// node_modules directory), the corral binary (CORRAL_BIN) and the
// directory its commands run in (CORRAL_WORKDIR). Every mode prints one
// line "ok ..." and exits 0, or throws, which exits 1.

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.CORRAL_NPM_DIR, "..", "resolve.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { SUPPORTED_PROTOCOL_VERSIONS } = require("@modelcontextprotocol/sdk/types.js");
const Ajv2020 = require("ajv/dist/2020").default;

const [mode, url] = process.argv.slice(2);

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

function stdio() {
  return new StdioClientTransport({
    command: process.env.CORRAL_BIN,
    args: ["mcp", "--workdir", process.env.CORRAL_WORKDIR],
    env: { ...process.env },
    stderr: "inherit",
  });
}

function transport() {
  return url ? new StreamableHTTPClientTransport(new URL(url)) : stdio();
}

// asVersion makes the client's initialize ask for version v, and records
// every message the server sends.
function asVersion(t, v, seen) {
  const send = t.send.bind(t);
  t.send = (msg, opts) => {
    if (msg.method === "initialize" && v) msg = { ...msg, params: { ...msg.params, protocolVersion: v } };
    return send(msg, opts);
  };
  const start = t.start.bind(t);
  t.start = async () => {
    const onmessage = t.onmessage;
    t.onmessage = (m, extra) => {
      seen.push(m);
      onmessage(m, extra);
    };
    return start();
  };
  return t;
}

async function connect(v, seen = []) {
  const client = new Client({ name: "corral-conformance", version: "1" });
  client.onerror = () => {};
  const t = asVersion(transport(), v, seen);
  await client.connect(t);
  return { client, t, seen };
}

// text returns a tool result's text content.
function text(res) {
  return res.content.map((c) => c.text).join("");
}

// everyTool lists the tools, validates their schemas with Ajv in strict
// mode, and calls each of them, validating structured results against
// the output schemas.
async function everyTool(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(
    JSON.stringify(names) === JSON.stringify(["environment", "job_kill", "job_output", "list_jobs", "reset_session", "run_command"]),
    `tools ${names}`,
  );
  const ajv = new Ajv2020({ strict: true });
  const out = {};
  for (const t of tools) {
    check(t.inputSchema.type === "object", `${t.name}: input schema type ${t.inputSchema.type}`);
    ajv.compile(t.inputSchema); // throws on anything strict mode refuses
    if (t.outputSchema) out[t.name] = ajv.compile(t.outputSchema);
  }
  const call = async (name, args) => {
    const res = await client.callTool({ name, arguments: args });
    check(!res.isError, `${name}: ${text(res)}`);
    if (out[name] && res.structuredContent) {
      check(out[name](res.structuredContent), `${name}: structured content does not match the output schema: ${ajv.errorsText(out[name].errors)}`);
    }
    return res;
  };
  const run = await call("run_command", { command: "cd /; export X=1; echo hello" });
  check(run.structuredContent.stdout === "hello\n", `run_command: ${JSON.stringify(run.structuredContent)}`);
  const job = await call("run_command", { command: "echo tick; sleep 300", background: true });
  const id = job.structuredContent.job_id;
  const o = await call("job_output", { job_id: id, wait_ms: 10000 });
  check(o.structuredContent.output === "tick\n", `job_output: ${JSON.stringify(o.structuredContent)}`);
  const l = await call("list_jobs", {});
  check(l.structuredContent.jobs.length === 1, `list_jobs: ${JSON.stringify(l.structuredContent)}`);
  const k = await call("job_kill", { job_id: id });
  check(k.structuredContent.status === "killed", `job_kill: ${JSON.stringify(k.structuredContent)}`);
  const e = await call("environment", {});
  check(e.structuredContent.cwd === "/", `environment: ${JSON.stringify(e.structuredContent)}`);
  await call("reset_session", {});
  const after = await call("run_command", { command: "echo ${X-unset}" });
  check(after.structuredContent.stdout === "unset\n", `after reset: ${after.structuredContent.stdout}`);
  return names.length;
}

const modes = {
  // Every protocol version the SDK offers, and every tool in each.
  async versions() {
    const got = [];
    for (const v of SUPPORTED_PROTOCOL_VERSIONS) {
      const seen = [];
      const { client } = await connect(v, seen);
      const negotiated = seen.find((m) => m.result?.protocolVersion)?.result.protocolVersion;
      // The server answers a version it does not know with one it does,
      // which the client must accept.
      check(SUPPORTED_PROTOCOL_VERSIONS.includes(negotiated), `${v}: negotiated ${negotiated}`);
      check(negotiated === v || v < "2024-11-05", `${v}: the server answered ${negotiated}`);
      await everyTool(client);
      await client.close();
      got.push(`${v}=>${negotiated}`);
    }
    console.log("ok versions " + got.join(","));
  },

  // The client survives the server's answers to malformed lines, and the
  // server goes on answering.
  async malformed() {
    const { client, t } = await connect();
    // The client's schema drops errors with a null id before they reach
    // it (reporting them to onerror): read what the server writes.
    const seen = [];
    let partial = "";
    t._process.stdout.on("data", (chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop();
      for (const l of lines) seen.push(JSON.parse(l));
    });
    const stdin = t._process.stdin;
    const lines = [
      "not json",
      '{"jsonrpc":"1.0","id":"m1","method":"ping"}',
      '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
      "5",
      '[{"jsonrpc":"2.0","id":"m2","method":"ping"}]',
      '{"jsonrpc":"2.0","id":"m3","method":"pi',
    ];
    for (const l of lines) {
      const before = seen.length;
      stdin.write(l + "\n");
      await client.ping();
      const errs = seen.slice(before).filter((m) => m.error);
      check(errs.length === 1 && [-32700, -32600].includes(errs[0].error.code), `${l}: ${JSON.stringify(seen.slice(before))}`);
    }
    console.log("ok malformed " + lines.length);
    await client.close();
  },

  // A call whose message is past the server's 8 MiB limit fails at once,
  // not after the client's own 60 s timeout: the server's error carries
  // the call's id, which the client writes after the params. Prints the
  // milliseconds it took.
  async oversized() {
    const { client } = await connect();
    const start = Date.now();
    // The SDK's own 60 s timeout, cut to 15 s: a call the server does not
    // fail at once fails the check without a minute's wait.
    const err = await client.callTool({ name: "run_command", arguments: { command: "#" + "x".repeat(9 << 20) } }, undefined, { timeout: 15000 }).then(
      () => null,
      (e) => e,
    );
    const ms = Date.now() - start;
    check(err && err.code === -32600 && String(err.message).includes("8 MiB"), `the oversized call: ${err}`);
    const res = await client.callTool({ name: "run_command", arguments: { command: "echo after" } });
    check(res.structuredContent.stdout === "after\n", `after the oversized call: ${text(res)}`);
    console.log("ok oversized " + ms);
    await client.close();
  },

  // A cancelled call gets no response and its command stops; the
  // connection goes on.
  async cancel() {
    const seen = [];
    const { client } = await connect(undefined, seen);
    const ac = new AbortController();
    const slow = client.callTool({ name: "run_command", arguments: { command: "echo started >&2; sleep 300" } }, undefined, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 500));
    ac.abort("changed my mind");
    await slow.then(
      () => check(false, "the aborted call resolved"),
      () => {},
    );
    const res = await client.callTool({ name: "run_command", arguments: { command: "echo after" } });
    check(res.structuredContent.stdout === "after\n", `after the cancel: ${text(res)}`);
    const ids = seen.filter((m) => m.id !== undefined && (m.result || m.error)).map((m) => m.id);
    // Request ids are 0 (initialize), 1 (the cancelled call), 2.
    check(!ids.includes(1), `a response to the cancelled call arrived: ${JSON.stringify(ids)}`);
    console.log("ok cancel");
    await client.close();
  },

  // SIGTERM answers the call in flight with an error result, then the
  // server exits.
  async shutdown() {
    const { client, t } = await connect();
    await client.callTool({ name: "run_command", arguments: { command: "sleep 300", background: true } });
    const closed = new Promise((r) => (t.onclose = r));
    const inflight = client.callTool({ name: "run_command", arguments: { command: "sleep 300" } });
    await new Promise((r) => setTimeout(r, 500));
    process.kill(t.pid, "SIGTERM");
    const res = await inflight;
    check(res.isError && text(res).includes("shutting down"), `the call in flight: ${JSON.stringify(res)}`);
    await closed;
    console.log("ok shutdown");
  },

  // A browser page elsewhere may not call the server; one on loopback may.
  async origin() {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
    };
    const post = (origin) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", origin },
        body: JSON.stringify(init),
      });
    const evil = await post("https://evil.example");
    const body = await evil.json();
    check(evil.status === 403 && body.error.code === -32600, `evil origin: ${evil.status} ${JSON.stringify(body)}`);
    const local = await post("http://localhost:5173");
    check(local.status === 200, `loopback origin: ${local.status}`);
    await local.body?.cancel();
    console.log("ok origin");
  },

  // client.close() closes the event stream without DELETE; the server
  // reaps the session, and the job in it, after --client-idle.
  async vanish() {
    const { client } = await connect();
    await client.callTool({ name: "run_command", arguments: { command: "sleep 300", background: true } });
    await client.close();
    console.log("ok vanish");
  },
};

await modes[mode]();
process.exit(0);
