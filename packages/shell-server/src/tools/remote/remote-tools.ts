// The remote MCP servers of `--mcp-config` as one source of tools for the tool set (SPEC §10): a
// RemoteServer per `"type": "http"` entry, connected in the background at start, one callback
// listener for their logins (R14.5), and their tokens in the token file. That file is where
// AHMA_HTTP_CLIENT_TOKEN_PATH says, else in Ahma's private state (not the temp directory, which
// sandboxed commands can write: a command must not plant tokens that send an agent's calls to
// someone else's account). A token file inside a path commands can write is refused.
// A client that lists its tools once (and ignores tools/list_changed) must still see the tools of a
// remote that needs no login: tools/list waits for the remotes' first connections, a little
// (`firstConnections`), and a remote slower than that is listed later, with list_changed.
import { basename, dirname, join, resolve } from 'node:path';
import { isInside, realpathLenient, type Environment } from '@ahma/core';
import { CallbackListener, TOKEN_PATH_VARIABLE, TokenStore, defaultTokenPath } from '@ahma/remote';
import type { Logger } from 'pino';
import type { ToolEntry } from '../tool.js';
import type { McpConfig } from './mcp-config.js';
import { RemoteServer } from './remote-server.js';

export interface RemoteToolsOptions {
  readonly config: McpConfig;
  readonly env: Environment;
  /** Ahma's private state root (the default home of the token file). */
  readonly stateRoot: string;
  /** Paths sandboxed commands may write: the token file may not lie in one. */
  readonly writable: readonly string[];
  readonly callbackPort: number;
  readonly callTimeoutMs: number;
  readonly logger: Logger;
  readonly onChange: () => void;
}

const CONNECT_TIMEOUT_MS = 15_000;
const LOGIN_TIMEOUT_MS = 10 * 60_000;
/** How long tools/list may wait, in all and for every remote together, for first connections. */
export const FIRST_LIST_WAIT_MS = 2_000;

export class RemoteTools {
  readonly #servers: readonly RemoteServer[];
  readonly #callbacks: CallbackListener;
  readonly #tokenPath: string;
  readonly #writable: readonly string[];
  /** When waits for the first connections end: FIRST_LIST_WAIT_MS after the first wait began. */
  #waitsEnd: number | undefined;

  constructor(options: RemoteToolsOptions) {
    const { config, logger } = options;
    for (const { name, reason } of config.skipped) {
      logger.warn({ file: config.file, server: name }, `MCP config entry not proxied: ${reason}`);
    }
    const tokenPath = resolve(defaultTokenPath(options.env, options.stateRoot));
    this.#tokenPath = tokenPath;
    this.#writable = options.writable;
    this.#callbacks = new CallbackListener(options.callbackPort);
    const shared = {
      store: new TokenStore(tokenPath),
      callbacks: this.#callbacks,
      logger,
      callTimeoutMs: options.callTimeoutMs,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      loginTimeoutMs: LOGIN_TIMEOUT_MS,
      onChange: options.onChange,
    };
    this.#servers = config.servers.map((server) => new RemoteServer(server, shared));
  }

  /**
   * Refuses a token file where sandboxed commands can write, by its path as given and as it
   * resolves (a symlinked directory, macOS's /var → /private/var): they could replace the tokens.
   */
  async check(): Promise<void> {
    const dir = dirname(this.#tokenPath);
    const resolved = join(await realpathLenient(dir), basename(this.#tokenPath));
    const writable = [
      ...this.#writable,
      ...(await Promise.all(this.#writable.map((path) => realpathLenient(path)))),
    ];
    const inside = writable.find(
      (path) => isInside(this.#tokenPath, path) || isInside(resolved, path),
    );
    if (inside !== undefined) {
      throw new Error(
        `${TOKEN_PATH_VARIABLE}=${this.#tokenPath} lies inside ${inside}, which sandboxed commands can write: ` +
          'they could replace the tokens of the remote MCP servers. Choose a path outside the sandbox scope and the temp directory, or unset it',
      );
    }
  }

  /** Starts connecting every server (in the background). */
  start(): void {
    for (const server of this.#servers) void server.connect();
  }

  /**
   * Resolves once every server's first connection has an outcome (tools listed, failed, or a login
   * asked for), and at the latest FIRST_LIST_WAIT_MS after the first call: one bound for all the
   * servers and all the callers, after which nothing waits any more. `whole`: no bound but each
   * attempt's own (CONNECT_TIMEOUT_MS), for a caller that needs a remote's tool and has nothing
   * else to do (the one-shot CLI).
   */
  async firstConnections({ whole = false } = {}): Promise<void> {
    const pending = this.#servers.filter((server) => !server.firstAttemptOver);
    if (pending.length === 0) return;
    if (whole) {
      await Promise.all(pending.map((server) => server.firstAttempt));
      return;
    }
    this.#waitsEnd ??= Date.now() + FIRST_LIST_WAIT_MS;
    const left = this.#waitsEnd - Date.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(pending.map((server) => server.firstAttempt)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Every server's tools, in the config's order. */
  get entries(): readonly ToolEntry[] {
    return this.#servers.flatMap((server) => server.entries);
  }

  async close(): Promise<void> {
    await Promise.all(this.#servers.map((server) => server.close()));
    await this.#callbacks.close();
  }
}
