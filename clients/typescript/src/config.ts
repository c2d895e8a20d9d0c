// Where the service and its token are, as `corral serve` and the CLI find
// them. The environment and the token file are read only where they
// exist (Node, Bun, Deno with permissions); a browser passes both.

interface ProcessLike {
  env: Record<string, string | undefined>;
}

/** The process environment, or an empty one where there is none (a browser). */
export function env(): Record<string, string | undefined> {
  const p = (globalThis as { process?: ProcessLike }).process;
  return p?.env ?? {};
}

export const DEFAULT_ADDR = "127.0.0.1:7070";

/** The service's base URL: url, else CORRAL_ADDR, else 127.0.0.1:7070 (HOST:PORT or http(s)://HOST:PORT). */
export function findURL(url: string | undefined): string {
  let u = url || env().CORRAL_ADDR || DEFAULT_ADDR;
  if (!u.includes("://")) u = "http://" + u;
  const parsed = new URL(u);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError(`corral service URL ${JSON.stringify(u)}: want HOST:PORT or http(s)://HOST:PORT`);
  }
  return u.replace(/\/+$/, "");
}

/**
 * The token: the argument, else CORRAL_TOKEN, else the file "token" of the
 * data directory (dataDir, else CORRAL_DATA, else $XDG_DATA_HOME/corral,
 * else ~/.local/share/corral); undefined when there is none.
 */
export async function findToken(token: string | undefined, dataDir: string | undefined): Promise<string | undefined> {
  if (token) return token.trim();
  const e = env();
  const t = (e.CORRAL_TOKEN ?? "").trim();
  if (t) return t;
  let dir = dataDir || e.CORRAL_DATA;
  if (!dir && e.XDG_DATA_HOME) dir = e.XDG_DATA_HOME + "/corral";
  if (!dir && e.HOME) dir = e.HOME + "/.local/share/corral";
  if (!dir) return undefined;
  try {
    // A specifier in a variable: bundlers for browsers leave it alone.
    const mod = "node:fs/promises";
    const fs = (await import(mod)) as { readFile(path: string, enc: string): Promise<string> };
    return (await fs.readFile(dir.replace(/\/+$/, "") + "/token", "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}
