// Conformance checks of corral mcp --service (the task service's tools)
// with the official MCP TypeScript SDK client, run by
// service_conformance_linux_test.go against a real corral serve. Usage:
//
//   node service.mjs MODE [URL]
//
// Without URL it starts `corral mcp --service $CORRAL_SERVICE` over stdio
// (the token in CORRAL_TOKEN, as the CLI finds it). The environment names
// the pinned npm tools (CORRAL_NPM_DIR), the corral binary (CORRAL_BIN),
// the service (CORRAL_SERVICE, CORRAL_TOKEN) and a task of agent "flaky"
// that fails its first attempt and passes its second (FLAKY_TASK). Every
// mode prints one line "ok ..." and exits 0, or throws, which exits 1.

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.CORRAL_NPM_DIR, "..", "resolve.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const Ajv2020 = require("ajv/dist/2020").default;

const [mode, url] = process.argv.slice(2);

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

function transport() {
  if (url) return new StreamableHTTPClientTransport(new URL(url));
  return new StdioClientTransport({
    command: process.env.CORRAL_BIN,
    args: ["mcp", "--service", process.env.CORRAL_SERVICE],
    env: { ...process.env },
    stderr: "inherit",
  });
}

// connect connects a client and records every message the server sends.
async function connect() {
  const client = new Client({ name: "corral-service-conformance", version: "1" });
  client.onerror = () => {};
  const t = transport();
  const seen = [];
  const start = t.start.bind(t);
  t.start = async () => {
    const onmessage = t.onmessage;
    t.onmessage = (m, extra) => {
      seen.push(m);
      onmessage(m, extra);
    };
    return start();
  };
  await client.connect(t);
  return { client, seen };
}

function text(res) {
  return res.content.map((c) => c.text).join("");
}

const TOOLS = ["cancel_execution", "execution_logs", "get_execution", "list_agents", "list_executions", "submit_task", "wait_execution"];

// schemas lists the tools and compiles their schemas with Ajv in strict
// mode; it returns the validators of the output schemas.
async function schemas(client) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(TOOLS), `tools ${names}`);
  const ajv = new Ajv2020({ strict: true });
  const out = {};
  for (const t of tools) {
    check(t.inputSchema.type === "object", `${t.name}: input schema type ${t.inputSchema.type}`);
    ajv.compile(t.inputSchema); // throws on anything strict mode refuses
    check(t.outputSchema, `${t.name} has no output schema`);
    out[t.name] = ajv.compile(t.outputSchema);
    check(t.description.length > 100, `${t.name}: description ${t.description}`);
  }
  return { ajv, out };
}

const modes = {
  // Every tool, its result validated against its output schema; a wait
  // follows a run through its retry and reports progress.
  async tools() {
    const { client } = await connect();
    const { ajv, out } = await schemas(client);
    const call = async (name, args, opts) => {
      const res = await client.callTool({ name, arguments: args }, undefined, opts);
      check(!res.isError, `${name}: ${text(res)}`);
      check(out[name](res.structuredContent), `${name}: structured content does not match the output schema: ${ajv.errorsText(out[name].errors)}`);
      check(JSON.stringify(JSON.parse(text(res))) === JSON.stringify(res.structuredContent), `${name}: the text content is not the structured content`);
      return res.structuredContent;
    };
    const agents = await call("list_agents", {});
    check(agents.agents.some((a) => a.name === "flaky" && a.max_attempts === 2), `list_agents: ${JSON.stringify(agents)}`);
    const sub = await call("submit_task", { agent: "flaky", input: process.env.FLAKY_TASK });
    check(sub.id && sub.attempt === 1, `submit_task: ${JSON.stringify(sub)}`);
    const progress = [];
    const w = await call("wait_execution", { id: sub.id, timeout_ms: 120000 }, { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 60000 });
    check(w.status === "succeeded" && w.finished && w.attempt === 2 && w.id !== sub.id && w.stdout === "second\n", `wait_execution: ${JSON.stringify(w)}`);
    check(w.attempts.length === 2 && w.attempts[0].error_type === "exit", `attempts: ${JSON.stringify(w.attempts)}`);
    check(progress.length >= 2 && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), `progress: ${JSON.stringify(progress)}`);
    const g = await call("get_execution", { id: sub.id });
    check(g.retried_by === w.id && !g.finished, `get_execution: ${JSON.stringify(g)}`);
    const l = await call("execution_logs", { id: w.id, tail: 10 });
    check(l.records.some((r) => r.stream === "stdout" && r.text === "second"), `execution_logs: ${JSON.stringify(l)}`);
    const list = await call("list_executions", { agent: "flaky", limit: 5 });
    check(list.executions.length >= 2, `list_executions: ${JSON.stringify(list)}`);
    const slow = await call("submit_task", { agent: "sleeper", input: "sleep 300" });
    const c = await call("cancel_execution", { id: slow.id });
    check(c.id === slow.id, `cancel_execution: ${JSON.stringify(c)}`);
    const end = await call("wait_execution", { id: slow.id, timeout_ms: 60000 });
    check(end.status === "cancelled", `after cancel_execution: ${JSON.stringify(end)}`);
    const bad = await client.callTool({ name: "submit_task", arguments: { agent: "nobody", input: "true" } });
    check(bad.isError && text(bad).includes("nobody"), `unknown agent: ${JSON.stringify(bad)}`);
    await client.close();
    console.log(`ok tools ${TOOLS.length} progress=${progress.length}`);
  },

  // A wait the client aborts gets no response; the connection goes on.
  async cancel() {
    const { client, seen } = await connect();
    const slow = await client.callTool({ name: "submit_task", arguments: { agent: "sleeper", input: "sleep 300" } });
    const id = slow.structuredContent.id;
    const ac = new AbortController();
    let progressed;
    const first = new Promise((r) => (progressed = r));
    const wait = client.callTool({ name: "wait_execution", arguments: { id, timeout_ms: 600000 } }, undefined, {
      signal: ac.signal,
      onprogress: () => progressed(),
      timeout: 600000,
    });
    await first; // the wait is under way
    ac.abort("changed my mind");
    await wait.then(
      () => check(false, "the aborted wait resolved"),
      () => {},
    );
    const g = await client.callTool({ name: "get_execution", arguments: { id } });
    check(!g.isError && g.structuredContent.status === "running", `after the abort: ${text(g)}`);
    // Request ids: 0 initialize, 1 submit_task, 2 the aborted wait, 3 get_execution.
    const ids = seen.filter((m) => m.id !== undefined && (m.result || m.error)).map((m) => m.id);
    check(!ids.includes(2), `a response to the aborted wait arrived: ${JSON.stringify(ids)}`);
    await client.callTool({ name: "cancel_execution", arguments: { id } });
    await client.close();
    console.log("ok cancel");
  },
};

await modes[mode]();
process.exit(0);
