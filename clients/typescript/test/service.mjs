// A real `corral serve` for the tests, built from this repository (or
// CORRAL_BIN), on a free loopback port with a temporary data directory.
// Every process it starts carries a tag in its environment; stop() waits
// for it to exit and checks that none of them is left.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";

export const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const TAG_ENV = "CORRAL_TEST_TAG";
let built;

export function corralBin() {
  if (process.env.CORRAL_BIN) return process.env.CORRAL_BIN;
  if (!built) {
    built = join(mkdtempSync(join(tmpdir(), "corral-ts-bin-")), "corral");
    execFileSync("go", ["build", "-o", built, "./cmd/corral"], { cwd: repo, stdio: "inherit" });
  }
  return built;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export function tagged(tag) {
  const needle = `${TAG_ENV}=${tag}`;
  const out = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/environ`, "latin1").split("\0").includes(needle)) out.push(Number(d));
    } catch { /* gone, or not ours to read */ }
  }
  return out;
}

export class Service {
  constructor(args = []) {
    this.root = mkdtempSync(join(tmpdir(), "corral-ts-"));
    this.data = join(this.root, "data");
    this.tag = "ts-" + randomBytes(6).toString("hex");
    this.args = args;
    this.log = "";
    this.proc = undefined;
  }

  async start() {
    this.port ??= await freePort();
    this.url = `http://127.0.0.1:${this.port}`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CORRAL_")));
    env[TAG_ENV] = this.tag;
    const p = spawn(corralBin(), ["serve", "--addr", `127.0.0.1:${this.port}`, "--data", this.data, "--pass-env", TAG_ENV, ...this.args],
      { env, stdio: ["ignore", "ignore", "pipe"] });
    this.proc = p;
    this.exited = new Promise((resolve) => p.on("exit", resolve));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("corral serve did not start within 60s:\n" + this.log)), 60_000);
      p.stderr.setEncoding("utf8");
      p.stderr.on("data", (s) => {
        this.log += s;
        if (this.log.includes("listening on")) { clearTimeout(timer); resolve(); }
      });
      p.on("exit", () => { clearTimeout(timer); reject(new Error("corral serve exited:\n" + this.log)); });
    });
    this.token = readFileSync(join(this.data, "token"), "utf8").trim();
  }

  /** Stops the service by its pid (SIGTERM, or sig) and waits for it. */
  async stop(sig = "SIGTERM") {
    if (!this.proc) return;
    const p = this.proc;
    this.proc = undefined;
    if (p.exitCode === null && p.signalCode === null) p.kill(sig);
    const t = setTimeout(() => p.kill("SIGKILL"), 60_000);
    await this.exited;
    clearTimeout(t);
  }

  /** Stops the service and checks that nothing it started is left. */
  async finish() {
    await this.stop();
    const deadline = Date.now() + 30_000;
    let left = tagged(this.tag);
    while (left.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      left = tagged(this.tag);
    }
    rmSync(this.root, { recursive: true, force: true });
    if (left.length) throw new Error(`processes of the service's runs outlived it: ${left}`);
  }
}
