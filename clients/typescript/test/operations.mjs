// The operationIds of docs/openapi.yaml, one per `operationId: NAME` line
// (the Go conformance test reads the whole document with a YAML parser).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repo } from "./service.mjs";

export function documentedOperations() {
  const text = readFileSync(join(repo, "docs", "openapi.yaml"), "utf8");
  return new Set([...text.matchAll(/^\s+operationId:\s*([A-Za-z]+)\s*$/gm)].map((m) => m[1]));
}
