// `npm install ./clients/typescript` works for a user, offline: the
// package has no dependencies and ships its built dist/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");

test("npm install of the directory, and of its packed tarball, needs no registry", () => {
  const dir = mkdtempSync(join(tmpdir(), "corral-ts-user-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user", version: "1.0.0", type: "module", private: true }));
    const npm = (args, cwd = dir) => execFileSync("npm", [...args, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8" });
    const check = `import { Client, AtCapacity, BudgetSpent, Rejected, OPERATIONS } from "@corralrun/client";
      const c = new Client({ url: "127.0.0.1:1", token: "t" });
      if (typeof AtCapacity !== "function" || !(BudgetSpent.prototype instanceof Rejected) || !OPERATIONS.getSpend) throw new Error("exports");
      console.log(c.url);`;
    writeFileSync(join(dir, "check.mjs"), check);
    npm(["install", pkg]);
    assert.equal(execFileSync(process.execPath, ["check.mjs"], { cwd: dir, encoding: "utf8" }).trim(), "http://127.0.0.1:1");
    const tarball = npm(["pack", "--pack-destination", dir], pkg).trim().split("\n").at(-1);
    npm(["install", join(dir, tarball)]);
    assert.equal(execFileSync(process.execPath, ["check.mjs"], { cwd: dir, encoding: "utf8" }).trim(), "http://127.0.0.1:1");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
