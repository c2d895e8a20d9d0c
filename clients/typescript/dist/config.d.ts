/** The process environment, or an empty one where there is none (a browser). */
export declare function env(): Record<string, string | undefined>;
export declare const DEFAULT_ADDR = "127.0.0.1:7070";
/** The service's base URL: url, else CORRAL_ADDR, else 127.0.0.1:7070 (HOST:PORT or http(s)://HOST:PORT). */
export declare function findURL(url: string | undefined): string;
/**
 * The token: the argument, else CORRAL_TOKEN, else the file "token" of the
 * data directory (dataDir, else CORRAL_DATA, else $XDG_DATA_HOME/corral,
 * else ~/.local/share/corral); undefined when there is none.
 */
export declare function findToken(token: string | undefined, dataDir: string | undefined): Promise<string | undefined>;
