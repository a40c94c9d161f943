// What one ahma-shell process is asked to be: the options its command line parses into, and their
// defaults. Each option's flag, environment variable and help is declared once, in flags.ts; cli/
// reads the command line into these, the runtime and the transports read them.
import type { NetworkMode, Timings } from '@ahma/core';

export interface ServerOptions {
  readonly mode: 'stdio' | 'http' | undefined;
  readonly toolsDir: string | undefined;
  /** Bundled catalog definitions to enable (revealed from the start). */
  readonly tools: readonly string[];
  /** Hide activate_tools, the built-in that lists and reveals the other bundles. */
  readonly noToolDiscovery: boolean;
  /**
   * SPEC §15: programs whose tools are read from their --help at start (names on PATH or absolute
   * paths), cached in the private state: served like a tool file's, without one.
   */
  readonly introspect: readonly string[];
  readonly sandboxScope: string | undefined;
  readonly noSandbox: boolean;
  /** Commands keep the server's capabilities (R7.6 opt-out). */
  readonly keepCapabilities: boolean;
  /** Root of Ahma's private state (logs); default chosen outside every writable path. */
  readonly stateDir: string | undefined;
  /** Force every call synchronous (R3.4). */
  readonly sync: boolean;
  /** Default timeout of a command, in seconds. */
  readonly timeoutSeconds: number;
  /**
   * R15.2: the output a result shows, in tokens (estimated as bytes / 4); a call's
   * `max_output_tokens` asks for another.
   */
  readonly maxOutputTokens: number;
  /** How long an async call waits for its command before answering `started` (SPEC §3); 0 = never. */
  readonly inlineWaitSeconds: number;
  /** Progress heartbeat interval; only tests change it (AHMA_TEST_HEARTBEAT_MS). */
  readonly heartbeatMs: number;
  /** The engine's stop waits, shortened; only tests set them (AHMA_TEST_TIMINGS, cli/options.ts). */
  readonly testTimings: Partial<Timings>;
  readonly noShellPool: boolean;
  readonly noHotReload: boolean;
  readonly sessionIsolation: boolean;
  /**
   * Directories an isolated session's root may be (or lie beneath); empty = the sandbox scope
   * (--allowed-roots, R8D.15).
   */
  readonly allowedRoots: readonly string[];
  /** Sessions open at once (default: 100, or 16 with --session-isolation). */
  readonly maxSessions: number | undefined;
  /** Memory all isolated session processes may use together, in MiB. */
  readonly sessionMemoryMb: number;
  /** Variable names or globs removed from every command's environment, beside Ahma's secrets. */
  readonly envDeny: readonly string[];
  /** R7.10: more paths commands may read (absolute or `~/`), even inside a denied one. */
  readonly allowRead: readonly string[];
  /** R7.10: more paths commands may not read (absolute or `~/`). */
  readonly denyRead: readonly string[];
  /** More paths commands may write (absolute or `~/`; each must exist). */
  readonly allowWrite: readonly string[];
  /** R7.11: hand-off paths commands may write after all (relative to the scope, or absolute). */
  readonly allowHandoffWrites: readonly string[];
  /** R7.14: toolchain profiles to enable (known names, checked here). */
  readonly profiles: readonly string[];
  /** SPEC §8: the command registry's management tools, and the commands registered through them. */
  readonly registry: boolean;
  /** The registry file (default `<scope>/.ahma/registry.json`); giving one turns the registry on. */
  readonly registryFile: string | undefined;
  /** SPEC §10: remote MCP servers whose tools are offered (default `<scope>/.ahma/mcp.json` if present). */
  readonly mcpConfig: string | undefined;
  /** R14.5: the localhost port of the OAuth callback of remote servers' logins. */
  readonly oauthCallbackPort: number;
  /**
   * --ops-page: a stdio server's operations page on 127.0.0.1 at this port (0 = any free one);
   * undefined = none. (An HTTP server serves the page at /ops itself.)
   */
  readonly opsPage: number | undefined;
  readonly httpHost: string;
  /** 0 = any free port (the URL it got is printed); undefined (`none`) = only the unix socket. */
  readonly httpPort: number | undefined;
  /** A file holding the bearer token HTTP requests must carry (AHMA_HTTP_TOKEN gives it directly). */
  readonly httpTokenFile: string | undefined;
  /** Loopback only: serve TCP without a token (a warning is logged). */
  readonly httpNoAuth: boolean;
  /**
   * R2.7: declare Claude Code's `claude/channel` and send each finished result that way too
   * (research preview: Claude Code shows it to the model when started with
   * --dangerously-load-development-channels).
   */
  readonly claudeChannel: boolean;
  /** R7.15: what commands may reach on the network. */
  readonly network: NetworkMode;
  /** R7.17: host rules commands may reach through the egress proxy (`--network proxy`). */
  readonly allowHosts: readonly string[];
  /** R7.17: host rules they may not, whatever allows them. */
  readonly denyHosts: readonly string[];
  /** The same endpoints on a unix socket, for the server's own uid only (no token needed there). */
  readonly httpSocket: string | undefined;
  readonly logToStderr: boolean;
  readonly debug: boolean;
  /** One-shot mode (R8.9): the tool to run and its JSON arguments. */
  readonly toolName: string | undefined;
  readonly toolArgs: string | undefined;
  /** Words after `--`, filling the one-shot tool's positional arguments. */
  readonly rawArgs: readonly string[];
}

export const DEFAULT_TIMEOUT_SECONDS = 600;
export const DEFAULT_INLINE_WAIT_SECONDS = 5;
/** Longer would hold calls open past the 60 s request timeout of common clients. */
export const MAX_INLINE_WAIT_SECONDS = 50;
export const DEFAULT_MAX_SESSIONS = 100;
/** An isolated session is a Node process of ~80 MB: a desk needs a few, not a hundred. */
export const DEFAULT_MAX_ISOLATED_SESSIONS = 16;
export const DEFAULT_SESSION_MEMORY_MB = 2048;
/** Loopback: a server reachable from other machines is asked for by name. */
export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 3000;
/** Where a remote server's OAuth login returns to (R14.5). */
export const DEFAULT_OAUTH_CALLBACK_PORT = 8080;
