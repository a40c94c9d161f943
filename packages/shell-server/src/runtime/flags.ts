// ahma-shell's flags (SPEC §7), each declared once: its name, the AHMA_* variable that stands in
// for it, the line(s) --help shows, how its value is read and checked, and whether an isolated
// session's process is given it. cli/options.ts builds parseArgs' options, the environment lookup
// and --help from this table; isolation/child-command.ts writes a session's command line from it.
//
// The table lives in runtime/ beside ServerOptions rather than in cli/ because a session's command
// line is written back from the parsed options, in isolation/, which may import runtime/ but not
// cli/. Passing a ready argv down from cli/ instead would be a second copy of the options, stale
// as soon as a layer adjusts them.
//
// Adding a flag: a ServerOptions field in settings.ts, its entry here (TypeScript refuses a field
// without one), and its row in the README's command-line table.
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  envDenyProblem,
  hostPatternProblem,
  MAX_MAX_OUTPUT_TOKENS,
  MAX_TIMEOUT_SECONDS,
  MIN_MAX_OUTPUT_TOKENS,
  PROFILE_NAMES,
  profileProblem,
} from '@ahma/core';
import {
  DEFAULT_HTTP_HOST,
  DEFAULT_HTTP_PORT,
  DEFAULT_INLINE_WAIT_SECONDS,
  DEFAULT_MAX_ISOLATED_SESSIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_OAUTH_CALLBACK_PORT,
  DEFAULT_SESSION_MEMORY_MB,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_INLINE_WAIT_SECONDS,
  type ServerOptions,
} from './settings.js';

/** The options flags give: all of ServerOptions but the test knob and what a one-shot runs. */
export type FlagSettings = Omit<
  ServerOptions,
  'heartbeatMs' | 'testTimings' | 'toolName' | 'toolArgs' | 'rawArgs'
>;

/** A value a flag refuses; its message is the usage error ahma-shell prints. */
export class InvalidFlag {
  constructor(readonly message: string) {}
}

/**
 * Whether an isolated session's process is given the flag: `no` keeps it with the server (what
 * serves HTTP, and the scope, which the session sets); `unless-default` passes it when its value is
 * not the default; `always` spells it out even then, so that a variable the process inherits
 * cannot change what the server was given.
 */
export type ToChild = 'no' | 'unless-default' | 'always';

interface Common {
  /** The flag without its dashes. */
  readonly name: string;
  /** The variable used when the flag is not given (an empty one counts as unset). */
  readonly env: string;
  /**
   * Core reads the variable itself, not cli/ (resolveToolsDir, resolveSandboxScope): a refusal
   * then says which of flag or variable named the path.
   */
  readonly envReadBy?: 'core';
  /** What --help shows after the flag (DIR, N, …). */
  readonly arg?: string;
  /** --help's lines; the first beside the flag, the others beneath it. */
  readonly help: readonly string[];
  readonly toChild: ToChild;
  /** A path a session's process gets absolute, relative ones resolved against the server's cwd. */
  readonly path?: true;
}

/** A switch: true when given, or when its variable is 1, true, yes or on. */
export interface SwitchFlag extends Common {
  readonly type: 'switch';
}

/** One value: the flag's (the last, when repeated), else the variable's, else undefined. */
export interface TextFlag<V> extends Common {
  readonly type: 'text';
  readonly read: (text: string | undefined) => V | InvalidFlag;
  /**
   * The value of the flag given without one (`--ops-page` alone, or before another flag); without
   * this, the flag needs a value.
   */
  readonly valueWhenBare?: string;
}

/**
 * A comma list, empty items dropped: the flag's, else the variable's. A repeatable flag's lists are
 * joined; another's last one wins.
 */
export interface ListFlag<V> extends Common {
  readonly type: 'list';
  readonly repeatable: boolean;
  readonly read: (items: readonly string[]) => V | InvalidFlag;
}

export type Flag<V> = TextFlag<V> | ListFlag<V> | ([V] extends [boolean] ? SwitchFlag : never);
export type AnyFlag = SwitchFlag | TextFlag<unknown> | ListFlag<unknown>;

const asGiven = (value: string | undefined): string | undefined => value;
const items = (values: readonly string[]): string[] => [...values];

export const FLAGS: { readonly [K in keyof FlagSettings]: Flag<FlagSettings[K]> } = {
  mode: {
    name: 'mode',
    env: 'AHMA_MODE',
    arg: 'stdio|http',
    help: ['transport'],
    type: 'text',
    read: (text) =>
      text === undefined || text === 'stdio' || text === 'http'
        ? text
        : new InvalidFlag(`--mode must be "stdio" or "http", not "${text}"`),
    // A session's process always serves stdio (child-command.ts).
    toChild: 'no',
  },
  toolsDir: {
    name: 'tools-dir',
    env: 'AHMA_TOOLS_DIR',
    envReadBy: 'core',
    arg: 'DIR',
    help: ['tool definitions (default: AHMA_TOOLS_DIR, else <scope>/.ahma/tools)'],
    type: 'text',
    read: asGiven,
    toChild: 'unless-default',
    path: true,
  },
  tools: {
    name: 'tools',
    env: 'AHMA_TOOLS',
    arg: 'a,b',
    help: ['enable bundled catalog definitions by name'],
    type: 'list',
    repeatable: false,
    read: items,
    toChild: 'unless-default',
  },
  noToolDiscovery: {
    name: 'no-tool-discovery',
    env: 'AHMA_NO_TOOL_DISCOVERY',
    help: ['hide activate_tools (listing and revealing the other bundles)'],
    type: 'switch',
    toChild: 'unless-default',
  },
  introspect: {
    name: 'introspect',
    env: 'AHMA_INTROSPECT',
    arg: 'PROGRAM,…',
    help: [
      "also serve the tools read from these programs' --help in the sandbox",
      "(names on PATH or absolute paths), kept in Ahma's private state until a",
      'program changes',
    ],
    type: 'list',
    repeatable: true,
    read: programs,
    // A session's process serves the same tools (from the same cache).
    toChild: 'unless-default',
  },
  sandboxScope: {
    name: 'sandbox-scope',
    env: 'AHMA_SANDBOX_SCOPE',
    envReadBy: 'core',
    arg: 'DIR',
    help: ['the only tree commands may write to (default: AHMA_SANDBOX_SCOPE, else cwd)'],
    type: 'text',
    read: asGiven,
    // A session's scope is its client's root: the session appends --sandbox-scope itself.
    toChild: 'no',
  },
  noSandbox: {
    name: 'no-sandbox',
    env: 'AHMA_NO_SANDBOX',
    help: ['run commands UNCONFINED (trusted environments only)'],
    type: 'switch',
    toChild: 'unless-default',
  },
  keepCapabilities: {
    name: 'keep-capabilities',
    env: 'AHMA_KEEP_CAPABILITIES',
    help: ["let commands keep the server's capabilities (root's: see docs/security.md)"],
    type: 'switch',
    toChild: 'unless-default',
  },
  stateDir: {
    name: 'state-dir',
    env: 'AHMA_STATE_DIR',
    arg: 'DIR',
    help: [
      "Ahma's private state (output logs), outside every writable path",
      '(default: $XDG_STATE_HOME/ahma, ~/.local/state/ahma, $XDG_RUNTIME_DIR/ahma)',
    ],
    type: 'text',
    read: asGiven,
    toChild: 'unless-default',
    path: true,
  },
  sync: {
    name: 'sync',
    env: 'AHMA_SYNC',
    help: ['make every call synchronous'],
    type: 'switch',
    toChild: 'unless-default',
  },
  timeoutSeconds: {
    name: 'timeout',
    env: 'AHMA_TIMEOUT',
    arg: 'SECONDS',
    help: [
      `default command timeout (default ${String(DEFAULT_TIMEOUT_SECONDS)}, at most ${String(MAX_TIMEOUT_SECONDS)})`,
    ],
    type: 'text',
    // The same bound as a tool's or a call's timeout_seconds (and far below what a timer can hold).
    read: (text) => {
      const seconds = positiveNumber(text, DEFAULT_TIMEOUT_SECONDS);
      return seconds !== undefined && seconds <= MAX_TIMEOUT_SECONDS
        ? seconds
        : new InvalidFlag(
            `--timeout must be a positive number of seconds, at most ${String(MAX_TIMEOUT_SECONDS)} (one day)`,
          );
    },
    toChild: 'always',
  },
  maxOutputTokens: {
    name: 'max-output-tokens',
    env: 'AHMA_MAX_OUTPUT_TOKENS',
    arg: 'N',
    help: [
      'the output a result shows, in tokens estimated as bytes/4 (default',
      `${String(DEFAULT_MAX_OUTPUT_TOKENS)}, ${String(MIN_MAX_OUTPUT_TOKENS)} to ${String(MAX_MAX_OUTPUT_TOKENS)}); beyond, the start and the end, and how`,
      "to read the rest; a call's max_output_tokens asks for another",
    ],
    type: 'text',
    read: (text) => {
      const tokens = text === undefined ? DEFAULT_MAX_OUTPUT_TOKENS : wholeNumber(text);
      return tokens >= MIN_MAX_OUTPUT_TOKENS && tokens <= MAX_MAX_OUTPUT_TOKENS
        ? tokens
        : new InvalidFlag(
            `--max-output-tokens must be a whole number of tokens from ${String(MIN_MAX_OUTPUT_TOKENS)} to ${String(MAX_MAX_OUTPUT_TOKENS)}`,
          );
    },
    toChild: 'always',
  },
  inlineWaitSeconds: {
    name: 'inline-wait',
    env: 'AHMA_INLINE_WAIT',
    arg: 'SECONDS',
    help: [
      'an async call answers with the result if its command ends within this',
      `time, else at once with an operation id (default ${String(DEFAULT_INLINE_WAIT_SECONDS)}, 0 = always at once,`,
      `at most ${String(MAX_INLINE_WAIT_SECONDS)})`,
    ],
    type: 'text',
    read: (text) => {
      const seconds =
        text === undefined ? DEFAULT_INLINE_WAIT_SECONDS : text.trim() === '' ? NaN : Number(text);
      return seconds >= 0 && seconds <= MAX_INLINE_WAIT_SECONDS
        ? seconds
        : new InvalidFlag(
            `--inline-wait must be a number of seconds from 0 to ${String(MAX_INLINE_WAIT_SECONDS)}`,
          );
    },
    toChild: 'always',
  },
  noShellPool: {
    name: 'no-shell-pool',
    env: 'AHMA_NO_SHELL_POOL',
    help: ['spawn every command directly instead of using warm shells'],
    type: 'switch',
    toChild: 'unless-default',
  },
  noHotReload: {
    name: 'no-hot-reload',
    env: 'AHMA_NO_HOT_RELOAD',
    help: ['do not watch the tools directory'],
    type: 'switch',
    toChild: 'unless-default',
  },
  registry: {
    name: 'registry',
    env: 'AHMA_REGISTRY',
    help: ['let agents register commands as tools at run time (add_command, …)'],
    type: 'switch',
    toChild: 'unless-default',
  },
  registryFile: {
    name: 'registry-file',
    env: 'AHMA_REGISTRY_FILE',
    arg: 'FILE',
    help: [
      'where registered commands are kept (default <scope>/.ahma/registry.json;',
      'implies --registry)',
    ],
    type: 'text',
    read: asGiven,
    toChild: 'unless-default',
    path: true,
  },
  mcpConfig: {
    name: 'mcp-config',
    env: 'AHMA_MCP_CONFIG',
    arg: 'FILE',
    help: [
      'offer the tools of the "type": "http" servers in FILE as <server>_<tool>',
      '(default <scope>/.ahma/mcp.json when it exists; OAuth logins as needed)',
    ],
    type: 'text',
    read: asGiven,
    // A session's process offers the remote servers of its own scope's .ahma/mcp.json.
    toChild: 'no',
  },
  oauthCallbackPort: {
    name: 'oauth-callback-port',
    env: 'AHMA_OAUTH_CALLBACK_PORT',
    arg: 'PORT',
    help: [
      `localhost port of those logins' callback (default ${String(DEFAULT_OAUTH_CALLBACK_PORT)})`,
    ],
    type: 'text',
    read: (text) => {
      const port = text === undefined ? DEFAULT_OAUTH_CALLBACK_PORT : Number(text);
      return Number.isInteger(port) && port >= 1 && port <= 65535
        ? port
        : new InvalidFlag('--oauth-callback-port must be a port number');
    },
    toChild: 'no',
  },
  opsPage: {
    name: 'ops-page',
    env: 'AHMA_OPS_PAGE',
    arg: '[PORT]',
    help: [
      'stdio: a live page of the operations on 127.0.0.1 (any free port without PORT);',
      'its one-time link is in the log and in `ahma-shell doctor` (HTTP serves it at /ops)',
    ],
    type: 'text',
    valueWhenBare: '0',
    read: (text) => {
      if (text === undefined) return undefined;
      const port = wholeNumber(text);
      return port >= 0 && port <= 65535
        ? port
        : new InvalidFlag('--ops-page takes a port number (0 = any free port)');
    },
    toChild: 'no',
  },
  envDeny: {
    name: 'env-deny',
    env: 'AHMA_ENV_DENY',
    arg: 'NAME|GLOB,…',
    help: [
      "also remove these variables from every command's environment (Ahma's",
      'own secrets always are)',
    ],
    type: 'list',
    repeatable: false,
    read: (entries) => {
      const problem = entries.map(envDenyProblem).find((each) => each !== undefined);
      return problem === undefined ? [...entries] : new InvalidFlag(problem);
    },
    // R7.9: a session's commands are denied what the server's are (its process adds Ahma's own
    // secrets and its livelog keys itself).
    toChild: 'unless-default',
  },
  profiles: {
    name: 'profile',
    env: 'AHMA_PROFILE',
    arg: 'NAME,…',
    help: [
      'let commands reach the caches and paths these toolchains need',
      `(${PROFILE_NAMES.join(', ')});`,
      'bundles given to --tools enable theirs',
    ],
    type: 'list',
    repeatable: true,
    read: (names) => {
      const unique = [...new Set(names)];
      const problem = unique.map(profileProblem).find((each) => each !== undefined);
      return problem === undefined ? unique : new InvalidFlag(`--profile: ${problem}`);
    },
    toChild: 'unless-default',
  },
  // R7.10: the paths are absolute or ~/ (the same HOME for a session's process), so they are
  // passed on as given.
  allowRead: {
    name: 'allow-read',
    env: 'AHMA_ALLOW_READ',
    arg: 'PATH,…',
    help: ['let commands also read these paths (absolute or ~/…), even credentials'],
    type: 'list',
    repeatable: true,
    read: (paths) => absoluteOrHome('allow-read', paths),
    toChild: 'unless-default',
  },
  denyRead: {
    name: 'deny-read',
    env: 'AHMA_DENY_READ',
    arg: 'PATH,…',
    help: ['keep commands from reading these paths (absolute or ~/…)'],
    type: 'list',
    repeatable: true,
    read: (paths) => absoluteOrHome('deny-read', paths),
    toChild: 'unless-default',
  },
  allowWrite: {
    name: 'allow-write',
    env: 'AHMA_ALLOW_WRITE',
    arg: 'PATH,…',
    help: ['let commands also write beneath these existing paths (absolute or ~/…)'],
    type: 'list',
    repeatable: true,
    read: (paths) => absoluteOrHome('allow-write', paths),
    toChild: 'unless-default',
  },
  network: {
    name: 'network',
    env: 'AHMA_NETWORK',
    arg: 'host|proxy|none',
    help: [
      'what commands may reach: host (default: any address), proxy (only',
      "the hosts allowed, through Ahma's egress proxy) or none (no socket but",
      'unix ones, no TCP at all)',
    ],
    type: 'text',
    read: (text = 'host') =>
      text === 'host' || text === 'proxy' || text === 'none'
        ? text
        : new InvalidFlag(`--network must be "host", "proxy" or "none", not "${text}"`),
    toChild: 'unless-default',
  },
  allowHosts: {
    name: 'allow-host',
    env: 'AHMA_ALLOW_HOST',
    arg: 'HOST[:PORT],…',
    help: [
      'proxy: let commands also reach these hosts (exact, or *.domain;',
      'ports 80 and 443 unless one is named; a loopback or private address',
      'only by its address, e.g. 127.0.0.1:5432); profiles add their own',
    ],
    type: 'list',
    repeatable: true,
    read: (rules) => hostRules('allow-host', rules),
    toChild: 'unless-default',
  },
  denyHosts: {
    name: 'deny-host',
    env: 'AHMA_DENY_HOST',
    arg: 'HOST[:PORT],…',
    help: ['proxy: never let commands reach these, whatever allows them'],
    type: 'list',
    repeatable: true,
    read: (rules) => hostRules('deny-host', rules),
    toChild: 'unless-default',
  },
  allowHandoffWrites: {
    name: 'allow-handoff-writes',
    env: 'AHMA_ALLOW_HANDOFF_WRITES',
    arg: 'PATH,…',
    help: [
      'let commands write these hand-off files after all (.git/hooks,',
      '.git/config, .ahma, .vscode, …; relative to the scope, or absolute)',
    ],
    type: 'list',
    repeatable: true,
    read: items,
    // R7.11: passed on as given, relative ones then meaning each session's own scope.
    toChild: 'unless-default',
  },
  sessionIsolation: {
    name: 'session-isolation',
    env: 'AHMA_SESSION_ISOLATION',
    help: ["HTTP: a process and sandbox scope per session (the client's first root)"],
    type: 'switch',
    toChild: 'no',
  },
  allowedRoots: {
    name: 'allowed-roots',
    env: 'AHMA_ALLOWED_ROOTS',
    arg: 'DIR,…',
    help: [
      "HTTP isolation: the directories a session's root may be or lie beneath",
      '(default: the sandbox scope)',
    ],
    type: 'list',
    repeatable: false,
    read: items,
    toChild: 'no',
  },
  maxSessions: {
    name: 'max-sessions',
    env: 'AHMA_MAX_SESSIONS',
    arg: 'N',
    help: [
      `HTTP: sessions open at once (default ${String(DEFAULT_MAX_SESSIONS)}, ${String(DEFAULT_MAX_ISOLATED_SESSIONS)} with --session-isolation)`,
    ],
    type: 'text',
    // Unset stays unset: the default depends on --session-isolation (transports/http/sessions.ts).
    read: (text) => {
      if (text === undefined) return undefined;
      const sessions = Number(text);
      return Number.isInteger(sessions) && sessions >= 1
        ? sessions
        : new InvalidFlag('--max-sessions must be a whole number of at least 1');
    },
    toChild: 'no',
  },
  sessionMemoryMb: {
    name: 'session-memory-mb',
    env: 'AHMA_SESSION_MEMORY_MB',
    arg: 'N',
    help: [
      'HTTP isolation: memory all session processes may use together',
      `(default ${String(DEFAULT_SESSION_MEMORY_MB)})`,
    ],
    type: 'text',
    read: (text) => {
      const mib = text === undefined ? DEFAULT_SESSION_MEMORY_MB : Number(text);
      return Number.isInteger(mib) && mib >= 1
        ? mib
        : new InvalidFlag('--session-memory-mb must be a whole number of MiB');
    },
    toChild: 'no',
  },
  httpHost: {
    name: 'http-host',
    env: 'AHMA_HTTP_HOST',
    arg: 'HOST',
    help: [`HTTP: address to bind (default ${DEFAULT_HTTP_HOST})`],
    type: 'text',
    read: (text) => text ?? DEFAULT_HTTP_HOST,
    toChild: 'no',
  },
  httpPort: {
    name: 'http-port',
    env: 'AHMA_HTTP_PORT',
    arg: 'PORT|none',
    help: [
      `HTTP: port (default ${String(DEFAULT_HTTP_PORT)}, 0 = any free port, none = only --http-socket)`,
    ],
    type: 'text',
    read: (text) => {
      if (text === 'none') return undefined;
      const port = text === undefined ? DEFAULT_HTTP_PORT : wholeNumber(text);
      return port >= 0 && port <= 65535
        ? port
        : new InvalidFlag('--http-port must be a port number (0 = any free port) or "none"');
    },
    toChild: 'no',
  },
  httpTokenFile: {
    name: 'http-token-file',
    env: 'AHMA_HTTP_TOKEN_FILE',
    arg: 'FILE',
    help: [
      "HTTP: the bearer token every request must carry is this file's content",
      "(or AHMA_HTTP_TOKEN's value); default: one made at the first start,",
      'kept in the private state (its path is printed at start)',
    ],
    type: 'text',
    read: asGiven,
    toChild: 'no',
  },
  httpNoAuth: {
    name: 'http-no-auth',
    env: 'AHMA_HTTP_NO_AUTH',
    help: ['HTTP on loopback: no token (any local process may connect)'],
    type: 'switch',
    toChild: 'no',
  },
  claudeChannel: {
    name: 'claude-channel',
    env: 'AHMA_CLAUDE_CHANNEL',
    help: [
      "also send each finished result as Claude Code's notifications/claude/channel",
      '(research preview: start Claude Code with',
      '--dangerously-load-development-channels server:NAME to have it shown)',
    ],
    type: 'switch',
    // The session's process answers its client's calls, so it is the one that sends them.
    toChild: 'unless-default',
  },
  httpSocket: {
    name: 'http-socket',
    env: 'AHMA_HTTP_SOCKET',
    arg: 'PATH',
    help: ['HTTP: the same endpoints on a unix socket, for this user only (no token)'],
    type: 'text',
    read: asGiven,
    toChild: 'no',
  },
  logToStderr: {
    name: 'log-to-stderr',
    env: 'AHMA_LOG_TO_STDERR',
    help: ['human-readable coloured logs on stderr instead of the log file'],
    type: 'switch',
    toChild: 'unless-default',
  },
  debug: {
    name: 'debug',
    env: 'AHMA_DEBUG',
    help: ['debug-level logging'],
    type: 'switch',
    toChild: 'unless-default',
  },
};

/** The table's entries in its order (the order of --help and of a session's command line). */
export function flagEntries(): readonly (readonly [keyof FlagSettings, AnyFlag])[] {
  return Object.entries(FLAGS) as [keyof FlagSettings, AnyFlag][];
}

/** Whether `value` is what the flag reads when neither it nor its variable is given. */
export function isDefaultValue(flag: AnyFlag, value: unknown): boolean {
  switch (flag.type) {
    case 'switch':
      return value === false;
    case 'list':
      return Array.isArray(value) && value.length === 0;
    case 'text':
      return value === flag.read(undefined);
  }
}

function positiveNumber(text: string | undefined, fallback: number): number | undefined {
  if (text === undefined) return fallback;
  const value = Number(text);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** A whole number, else NaN (which no range check passes); blank is not 0. */
function wholeNumber(text: string): number {
  const value = text.trim() === '' ? NaN : Number(text);
  return Number.isInteger(value) ? value : NaN;
}

/** R7.10: a relative path would mean a different file to every command's working directory. */
function absoluteOrHome(name: string, paths: readonly string[]): string[] | InvalidFlag {
  const relative = paths.find((path) => !path.startsWith('/') && !path.startsWith('~/'));
  return relative === undefined
    ? [...paths]
    : new InvalidFlag(
        `--${name} ${relative}: a path must be absolute or start with ~/ (the server's HOME)`,
      );
}

/**
 * SPEC §15: a program to introspect is a name looked up on PATH or an absolute path: a relative one
 * would mean another file to a session's process, which starts in its own scope.
 */
function programs(names: readonly string[]): string[] | InvalidFlag {
  const relative = names.find((name) => name.includes('/') && !name.startsWith('/'));
  return relative === undefined
    ? [...new Set(names)]
    : new InvalidFlag(
        `--introspect ${relative}: a program is a name found on PATH or an absolute path`,
      );
}

/** R7.17: each rule a host, `*.domain` or address, with an optional port. */
function hostRules(name: string, rules: readonly string[]): string[] | InvalidFlag {
  for (const rule of rules) {
    const problem = hostPatternProblem(rule);
    if (problem !== undefined) return new InvalidFlag(`--${name} ${rule}: ${problem}`);
  }
  return [...rules];
}
