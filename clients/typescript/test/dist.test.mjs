// dist/ is committed (so that `npm install ./clients/typescript` needs no
// build and no registry): it must be exactly what tsc builds from src/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(pkg, "node_modules", "typescript", "bin", "tsc");

test("dist is what tsc builds from src", { skip: !existsSync(tsc) && "SKIP: run npm ci first (typescript is a devDependency)" }, () => {
  const out = mkdtempSync(join(tmpdir(), "corral-ts-dist-"));
  try {
    execFileSync(process.execPath, [tsc, "-p", join(pkg, "tsconfig.json"), "--outDir", out], { stdio: "inherit" });
    const built = readdirSync(out).sort();
    assert.deepEqual(readdirSync(join(pkg, "dist")).sort(), built, "dist/ holds other files than tsc builds: run npm run build");
    for (const f of built) {
      assert.equal(readFileSync(join(pkg, "dist", f), "utf8"), readFileSync(join(out, f), "utf8"), `dist/${f} is stale: run npm run build`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
