// ahma-shell's command line (SPEC §7): flags, their AHMA_* environment equivalents, and usage.
import { parseArgs } from 'node:util';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  envDenyProblem,
  hostPatternProblem,
  MAX_MAX_OUTPUT_TOKENS,
  MAX_TIMEOUT_SECONDS,
  MIN_MAX_OUTPUT_TOKENS,
  PROFILES,
  profileProblem,
} from '@ahma/core';
import { HEARTBEAT_INTERVAL_MS } from '../calls/heartbeat.js';
import {
  DEFAULT_INLINE_WAIT_SECONDS,
  DEFAULT_MAX_ISOLATED_SESSIONS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_MEMORY_MB,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_INLINE_WAIT_SECONDS,
  type ServerOptions,
} from '../runtime/settings.js';

export type ParsedCommandLine =
  | { readonly kind: 'run'; readonly options: ServerOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'usage'; readonly error: string | undefined };

export const USAGE = `Usage:
  ahma-shell --mode stdio [options]             serve MCP over stdin/stdout (what MCP clients start)
  ahma-shell --mode http [options]              serve MCP over HTTP at http://127.0.0.1:3000/mcp
  ahma-shell --tool_name TOOL [--tool_args JSON] [-- WORDS…]
                                                run one tool synchronously and exit with its code
  ahma-shell doctor [options] [--json]          what the sandbox enforces on this machine
  ahma-shell grants list|revoke ID…             the grants people gave when Ahma asked

Options (each has an AHMA_* environment equivalent, e.g. --no-sandbox = AHMA_NO_SANDBOX=1):
  --mode stdio|http        transport
  --tools-dir DIR          tool definitions (default: AHMA_TOOLS_DIR, else <scope>/.ahma/tools)
  --tools a,b              enable bundled catalog definitions by name
  --no-tool-discovery      hide activate_tools (listing and revealing the other bundles)
  --sandbox-scope DIR      the only tree commands may write to (default: AHMA_SANDBOX_SCOPE, else cwd)
  --no-sandbox             run commands UNCONFINED (trusted environments only)
  --keep-capabilities      let commands keep the server's capabilities (root's: see docs/security.md)
  --state-dir DIR          Ahma's private state (output logs), outside every writable path
                           (default: $XDG_STATE_HOME/ahma, ~/.local/state/ahma, $XDG_RUNTIME_DIR/ahma)
  --sync                   make every call synchronous
  --timeout SECONDS        default command timeout (default ${String(DEFAULT_TIMEOUT_SECONDS)}, at most ${String(MAX_TIMEOUT_SECONDS)})
  --max-output-tokens N    the output a result shows, in tokens estimated as bytes/4 (default
                           ${String(DEFAULT_MAX_OUTPUT_TOKENS)}, ${String(MIN_MAX_OUTPUT_TOKENS)} to ${String(MAX_MAX_OUTPUT_TOKENS)}); beyond, the start and the end, and how
                           to read the rest; a call's max_output_tokens asks for another
  --inline-wait SECONDS    an async call answers with the result if its command ends within this
                           time, else at once with an operation id (default ${String(DEFAULT_INLINE_WAIT_SECONDS)}, 0 = always at once,
                           at most ${String(MAX_INLINE_WAIT_SECONDS)})
  --no-shell-pool          spawn every command directly instead of using warm shells
  --no-hot-reload          do not watch the tools directory
  --registry               let agents register commands as tools at run time (add_command, …)
  --registry-file FILE     where registered commands are kept (default <scope>/.ahma/registry.json;
                           implies --registry)
  --mcp-config FILE        offer the tools of the "type": "http" servers in FILE as <server>_<tool>
                           (default <scope>/.ahma/mcp.json when it exists; OAuth logins as needed)
  --oauth-callback-port PORT  localhost port of those logins' callback (default 8080)
  --env-deny NAME|GLOB,…   also remove these variables from every command's environment (Ahma's
                           own secrets always are)
  --profile NAME,…         let commands reach the caches and paths these toolchains need
                           (${Object.keys(PROFILES).join(', ')});
                           bundles given to --tools enable theirs
  --allow-read PATH,…      let commands also read these paths (absolute or ~/…), even credentials
  --deny-read PATH,…       keep commands from reading these paths (absolute or ~/…)
  --allow-write PATH,…     let commands also write beneath these existing paths (absolute or ~/…)
  --network host|proxy|none  what commands may reach: host (default: any address), proxy (only
                           the hosts allowed, through Ahma's egress proxy) or none (no socket but
                           unix ones, no TCP at all)
  --allow-host HOST[:PORT],…  proxy: let commands also reach these hosts (exact, or *.domain;
                           ports 80 and 443 unless one is named; a loopback or private address
                           only by its address, e.g. 127.0.0.1:5432); profiles add their own
  --deny-host HOST[:PORT],…  proxy: never let commands reach these, whatever allows them
  --allow-handoff-writes PATH,…  let commands write these hand-off files after all (.git/hooks,
                           .git/config, .ahma, .vscode, …; relative to the scope, or absolute)
  --session-isolation      HTTP: a process and sandbox scope per session (the client's first root)
  --allowed-roots DIR,…    HTTP isolation: the directories a session's root may be or lie beneath
                           (default: the sandbox scope)
  --max-sessions N         HTTP: sessions open at once (default ${String(DEFAULT_MAX_SESSIONS)}, ${String(DEFAULT_MAX_ISOLATED_SESSIONS)} with --session-isolation)
  --session-memory-mb N    HTTP isolation: memory all session processes may use together
                           (default ${String(DEFAULT_SESSION_MEMORY_MB)})
  --http-host HOST         HTTP: address to bind (default 127.0.0.1)
  --http-port PORT|none    HTTP: port (default 3000, 0 = any free port, none = only --http-socket)
  --http-token-file FILE   HTTP: the bearer token every request must carry is this file's content
                           (or AHMA_HTTP_TOKEN's value); default: one made at the first start,
                           kept in the private state (its path is printed at start)
  --http-no-auth           HTTP on loopback: no token (any local process may connect)
  --claude-channel         also send each finished result as Claude Code's notifications/claude/channel
                           (research preview: start Claude Code with
                           --dangerously-load-development-channels server:NAME to have it shown)
  --http-socket PATH       HTTP: the same endpoints on a unix socket, for this user only (no token)
  --log-to-stderr          human-readable coloured logs on stderr instead of the log file
  --debug                  debug-level logging
  -h, --help               show this help
  -v, --version            show the version
`;

/** Flags and the environment variables that stand in for them. */
const ENV: Record<string, string> = {
  mode: 'AHMA_MODE',
  tools: 'AHMA_TOOLS',
  'no-tool-discovery': 'AHMA_NO_TOOL_DISCOVERY',
  timeout: 'AHMA_TIMEOUT',
  'max-output-tokens': 'AHMA_MAX_OUTPUT_TOKENS',
  'inline-wait': 'AHMA_INLINE_WAIT',
  'no-sandbox': 'AHMA_NO_SANDBOX',
  'keep-capabilities': 'AHMA_KEEP_CAPABILITIES',
  'state-dir': 'AHMA_STATE_DIR',
  sync: 'AHMA_SYNC',
  'no-shell-pool': 'AHMA_NO_SHELL_POOL',
  'no-hot-reload': 'AHMA_NO_HOT_RELOAD',
  'session-isolation': 'AHMA_SESSION_ISOLATION',
  'allowed-roots': 'AHMA_ALLOWED_ROOTS',
  'max-sessions': 'AHMA_MAX_SESSIONS',
  'session-memory-mb': 'AHMA_SESSION_MEMORY_MB',
  'env-deny': 'AHMA_ENV_DENY',
  profile: 'AHMA_PROFILE',
  'allow-read': 'AHMA_ALLOW_READ',
  'deny-read': 'AHMA_DENY_READ',
  'allow-write': 'AHMA_ALLOW_WRITE',
  'allow-handoff-writes': 'AHMA_ALLOW_HANDOFF_WRITES',
  'http-no-auth': 'AHMA_HTTP_NO_AUTH',
  'claude-channel': 'AHMA_CLAUDE_CHANNEL',
  network: 'AHMA_NETWORK',
  'allow-host': 'AHMA_ALLOW_HOST',
  'deny-host': 'AHMA_DENY_HOST',
  'http-socket': 'AHMA_HTTP_SOCKET',
  registry: 'AHMA_REGISTRY',
  'registry-file': 'AHMA_REGISTRY_FILE',
  'mcp-config': 'AHMA_MCP_CONFIG',
  'oauth-callback-port': 'AHMA_OAUTH_CALLBACK_PORT',
  'http-host': 'AHMA_HTTP_HOST',
  'http-port': 'AHMA_HTTP_PORT',
  'http-token-file': 'AHMA_HTTP_TOKEN_FILE',
  'log-to-stderr': 'AHMA_LOG_TO_STDERR',
  debug: 'AHMA_DEBUG',
};

export function parseCommandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ParsedCommandLine {
  const dashDash = argv.indexOf('--');
  const flags = dashDash === -1 ? argv : argv.slice(0, dashDash);
  const rawArgs = dashDash === -1 ? [] : argv.slice(dashDash + 1);
  let values;
  try {
    ({ values } = parseArgs({
      args: [...flags],
      strict: true,
      allowPositionals: false,
      options: {
        mode: { type: 'string' },
        'tools-dir': { type: 'string' },
        tools: { type: 'string' },
        'no-tool-discovery': { type: 'boolean' },
        'sandbox-scope': { type: 'string' },
        'no-sandbox': { type: 'boolean' },
        'keep-capabilities': { type: 'boolean' },
        'state-dir': { type: 'string' },
        sync: { type: 'boolean' },
        timeout: { type: 'string' },
        'max-output-tokens': { type: 'string' },
        'inline-wait': { type: 'string' },
        'no-shell-pool': { type: 'boolean' },
        'no-hot-reload': { type: 'boolean' },
        'session-isolation': { type: 'boolean' },
        'allowed-roots': { type: 'string' },
        'max-sessions': { type: 'string' },
        'session-memory-mb': { type: 'string' },
        'env-deny': { type: 'string' },
        profile: { type: 'string', multiple: true },
        'allow-read': { type: 'string', multiple: true },
        'deny-read': { type: 'string', multiple: true },
        'allow-write': { type: 'string', multiple: true },
        'allow-handoff-writes': { type: 'string', multiple: true },
        'http-no-auth': { type: 'boolean' },
        'claude-channel': { type: 'boolean' },
        network: { type: 'string' },
        'allow-host': { type: 'string', multiple: true },
        'deny-host': { type: 'string', multiple: true },
        'http-socket': { type: 'string' },
        registry: { type: 'boolean' },
        'registry-file': { type: 'string' },
        'http-host': { type: 'string' },
        'http-port': { type: 'string' },
        'mcp-config': { type: 'string' },
        'oauth-callback-port': { type: 'string' },
        'http-token-file': { type: 'string' },
        'log-to-stderr': { type: 'boolean' },
        debug: { type: 'boolean' },
        tool_name: { type: 'string' },
        tool_args: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    }));
  } catch (error) {
    return { kind: 'usage', error: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };

  const text = (name: keyof typeof values & string): string | undefined => {
    const value = values[name];
    if (typeof value === 'string') return value;
    const fromEnv = ENV[name] === undefined ? undefined : env[ENV[name]];
    return fromEnv === '' ? undefined : fromEnv;
  };
  const flag = (name: keyof typeof values & string): boolean => {
    if (values[name] === true) return true;
    const fromEnv = ENV[name] === undefined ? undefined : env[ENV[name]];
    return fromEnv !== undefined && /^(1|true|yes|on)$/i.test(fromEnv);
  };

  const mode = text('mode');
  if (mode !== undefined && mode !== 'stdio' && mode !== 'http') {
    return { kind: 'usage', error: `--mode must be "stdio" or "http", not "${mode}"` };
  }
  const network = text('network') ?? 'host';
  if (network !== 'host' && network !== 'proxy' && network !== 'none') {
    return {
      kind: 'usage',
      error: `--network must be "host", "proxy" or "none", not "${network}"`,
    };
  }
  const timeout = positiveNumber(text('timeout'), DEFAULT_TIMEOUT_SECONDS);
  // The same bound as a tool's or a call's timeout_seconds (and far below what a timer can hold).
  if (timeout === undefined || timeout > MAX_TIMEOUT_SECONDS) {
    return {
      kind: 'usage',
      error: `--timeout must be a positive number of seconds, at most ${String(MAX_TIMEOUT_SECONDS)} (one day)`,
    };
  }
  const tokensText = text('max-output-tokens');
  const maxOutputTokens =
    tokensText === undefined
      ? DEFAULT_MAX_OUTPUT_TOKENS
      : tokensText.trim() === ''
        ? NaN
        : Number(tokensText);
  if (
    !Number.isInteger(maxOutputTokens) ||
    maxOutputTokens < MIN_MAX_OUTPUT_TOKENS ||
    maxOutputTokens > MAX_MAX_OUTPUT_TOKENS
  ) {
    return {
      kind: 'usage',
      error: `--max-output-tokens must be a whole number of tokens from ${String(MIN_MAX_OUTPUT_TOKENS)} to ${String(MAX_MAX_OUTPUT_TOKENS)}`,
    };
  }
  const inlineWait = inlineWaitSeconds(text('inline-wait'));
  if (inlineWait === undefined) {
    return {
      kind: 'usage',
      error: `--inline-wait must be a number of seconds from 0 to ${String(MAX_INLINE_WAIT_SECONDS)}`,
    };
  }
  // Test-only: lets the e2e suite see heartbeats without waiting seconds for each (not in USAGE).
  const heartbeatText = env['AHMA_TEST_HEARTBEAT_MS'];
  const heartbeatMs = positiveNumber(
    heartbeatText === '' ? undefined : heartbeatText,
    HEARTBEAT_INTERVAL_MS,
  );
  if (heartbeatMs === undefined) {
    return {
      kind: 'usage',
      error: 'AHMA_TEST_HEARTBEAT_MS must be a positive number of milliseconds',
    };
  }
  const portText = text('http-port');
  const port =
    portText === 'none'
      ? undefined
      : portText === undefined
        ? 3000
        : portText.trim() === ''
          ? NaN
          : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    return {
      kind: 'usage',
      error: '--http-port must be a port number (0 = any free port) or "none"',
    };
  }
  const httpSocket = text('http-socket');
  if (port === undefined && httpSocket === undefined) {
    return { kind: 'usage', error: '--http-port none needs --http-socket PATH' };
  }
  const maxSessionsText = text('max-sessions');
  const maxSessions = maxSessionsText === undefined ? undefined : Number(maxSessionsText);
  if (maxSessions !== undefined && (!Number.isInteger(maxSessions) || maxSessions < 1)) {
    return { kind: 'usage', error: '--max-sessions must be a whole number of at least 1' };
  }
  const envDeny = list(text('env-deny'));
  for (const entry of envDeny) {
    const problem = envDenyProblem(entry);
    if (problem !== undefined) return { kind: 'usage', error: problem };
  }
  // Repeatable flags, each a comma list; the flags replace the environment variable.
  const lists = (
    name:
      | 'profile'
      | 'allow-read'
      | 'deny-read'
      | 'allow-write'
      | 'allow-handoff-writes'
      | 'allow-host'
      | 'deny-host',
  ): string[] => {
    const given = values[name];
    return given === undefined ? list(text(name)) : given.flatMap((each) => list(each));
  };
  const profiles = [...new Set(lists('profile'))];
  for (const name of profiles) {
    const problem = profileProblem(name);
    if (problem !== undefined) return { kind: 'usage', error: `--profile: ${problem}` };
  }
  const paths: Record<'allow-read' | 'deny-read' | 'allow-write', string[]> = {
    'allow-read': lists('allow-read'),
    'deny-read': lists('deny-read'),
    'allow-write': lists('allow-write'),
  };
  for (const [name, entries] of Object.entries(paths)) {
    const relative = entries.find((entry) => !entry.startsWith('/') && !entry.startsWith('~/'));
    if (relative !== undefined) {
      return {
        kind: 'usage',
        error: `--${name} ${relative}: a path must be absolute or start with ~/ (the server's HOME)`,
      };
    }
  }
  const hosts = { 'allow-host': lists('allow-host'), 'deny-host': lists('deny-host') };
  for (const [name, entries] of Object.entries(hosts)) {
    for (const entry of entries) {
      const problem = hostPatternProblem(entry);
      if (problem !== undefined) return { kind: 'usage', error: `--${name} ${entry}: ${problem}` };
    }
  }
  const memoryText = text('session-memory-mb');
  const sessionMemoryMb = memoryText === undefined ? DEFAULT_SESSION_MEMORY_MB : Number(memoryText);
  if (!Number.isInteger(sessionMemoryMb) || sessionMemoryMb < 1) {
    return { kind: 'usage', error: '--session-memory-mb must be a whole number of MiB' };
  }
  const callbackText = text('oauth-callback-port');
  const callbackPort = callbackText === undefined ? 8080 : Number(callbackText);
  if (!Number.isInteger(callbackPort) || callbackPort < 1 || callbackPort > 65535) {
    return { kind: 'usage', error: '--oauth-callback-port must be a port number' };
  }
  const toolName = values.tool_name;
  if (values.tool_args !== undefined && toolName === undefined) {
    return { kind: 'usage', error: '--tool_args needs --tool_name' };
  }
  if (mode === undefined && toolName === undefined) return { kind: 'usage', error: undefined };

  return {
    kind: 'run',
    options: {
      mode,
      toolsDir: values['tools-dir'],
      tools: list(text('tools')),
      noToolDiscovery: flag('no-tool-discovery'),
      sandboxScope: values['sandbox-scope'],
      noSandbox: flag('no-sandbox'),
      keepCapabilities: flag('keep-capabilities'),
      stateDir: text('state-dir'),
      sync: flag('sync'),
      timeoutSeconds: timeout,
      maxOutputTokens,
      inlineWaitSeconds: inlineWait,
      heartbeatMs,
      noShellPool: flag('no-shell-pool'),
      noHotReload: flag('no-hot-reload'),
      sessionIsolation: flag('session-isolation'),
      allowedRoots: list(text('allowed-roots')),
      maxSessions,
      sessionMemoryMb,
      envDeny,
      allowRead: paths['allow-read'],
      denyRead: paths['deny-read'],
      allowWrite: paths['allow-write'],
      allowHandoffWrites: lists('allow-handoff-writes'),
      profiles,
      registry: flag('registry') || text('registry-file') !== undefined,
      registryFile: text('registry-file'),
      mcpConfig: text('mcp-config'),
      oauthCallbackPort: callbackPort,
      httpHost: text('http-host') ?? '127.0.0.1',
      httpPort: port,
      httpTokenFile: text('http-token-file'),
      httpNoAuth: flag('http-no-auth'),
      claudeChannel: flag('claude-channel'),
      network,
      allowHosts: hosts['allow-host'],
      denyHosts: hosts['deny-host'],
      httpSocket,
      logToStderr: flag('log-to-stderr'),
      debug: flag('debug'),
      toolName,
      toolArgs: values.tool_args,
      rawArgs,
    },
  };
}

/** A comma-separated list, without empty items. */
function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function positiveNumber(text: string | undefined, fallback: number): number | undefined {
  if (text === undefined) return fallback;
  const value = Number(text);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

function inlineWaitSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return DEFAULT_INLINE_WAIT_SECONDS;
  const value = text.trim() === '' ? NaN : Number(text);
  return Number.isFinite(value) && value >= 0 && value <= MAX_INLINE_WAIT_SECONDS
    ? value
    : undefined;
}
