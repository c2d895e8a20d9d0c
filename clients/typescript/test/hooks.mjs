// What the budget and webhook tests need beside a service: a headless
// agent whose run spends tokens (a shell script printing Claude Code's
// stream-json), and a webhook receiver on loopback.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const session = "5f0c6c8e-1b9d-4c3a-9a51-0c2f3f7d9e11";
const usage = { input_tokens: 12, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 30 };
// A turn that spends TURN_TOKENS and reports no cost (corral prices its usage: cost_estimated).
const turn = [
  { type: "system", subtype: "init", session_id: session, model: "claude-sonnet-4-5", tools: ["Bash"], mcp_servers: [], permissionMode: "bypassPermissions", cwd: "/tmp", uuid: "u0" },
  { type: "assistant", session_id: session, parent_tool_use_id: null, message: { id: "msg_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "Spent." }], stop_reason: "end_turn", usage } },
  { type: "result", subtype: "success", is_error: false, num_turns: 1, result: "Spent.", session_id: session, duration_ms: 10, uuid: "ur", usage },
];
/** The tokens of the turn, as corral counts them. */
export const TURN_TOKENS = 2142;

/** The command template of a headless agent whose every run prints the turn (printf, the shell's builtin: no PATH needed) and exits. */
export function fakeClaude(dir) {
  const script = join(dir, "fake-claude");
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' ${turn.map((l) => `'${JSON.stringify(l)}'`).join(" ")}\n`);
  chmodSync(script, 0o755);
  return [script, "--", "{{prompt}}"];
}

/** A webhook receiver on loopback: it answers every POST 204 and keeps each one's path, headers and body. */
export async function receiver() {
  const posts = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      posts.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    posts,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

/** Whether a delivery's Corral-Signature is the HMAC-SHA256 of its timestamp and body under secret (docs/webhooks.md). */
export function signedBy(secret, headers, body) {
  const parts = Object.fromEntries(String(headers["corral-signature"] ?? "").split(",").map((p) => p.split("=", 2)));
  const mac = createHmac("sha256", secret).update(`${parts.t}.`).update(body).digest("hex");
  return typeof parts.v1 === "string" && parts.v1.length === mac.length && timingSafeEqual(Buffer.from(mac), Buffer.from(parts.v1));
}
