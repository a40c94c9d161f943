// Connects a real MCP Client to one server (a stdio command or a Streamable HTTP URL, logging in with
// OAuth when it asks: @ahma/remote), lists all its tools (following nextCursor) and closes. The only
// module of this package that uses the MCP SDK.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  McpError,
  type Implementation,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  ACCEPT_ANY_OUTPUT,
  AuthorizationFailed,
  connectHttp,
  messageOf,
  oneLine,
  TokenFileError,
  type HttpConnectOptions,
} from '@ahma/remote';
import packageJson from '../package.json' with { type: 'json' };
import { ListToolsError, networkCause, schemaIssues } from './errors.js';

/** The server to list: a command that speaks MCP over stdio, or a Streamable HTTP endpoint. */
export type ListTarget =
  | { kind: 'stdio'; command: string; args: readonly string[] }
  | { kind: 'http'; url: URL; auth: HttpAuth; bearer?: string | undefined };

/** How an HTTP server that asks for OAuth is logged in to (everything but the URL). */
export type HttpAuth = Omit<HttpConnectOptions, 'url' | 'request'>;

export interface ListOptions {
  /** Bound on connecting and listing together; the server is then stopped or disconnected. */
  timeoutMs: number;
  /** A stdio server's working directory (default: this process's). */
  cwd?: string | undefined;
  /** A stdio server's environment, whole (default: this process's). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** What a server said about itself and every tool it offers, in its order. */
export interface ServerListing {
  server: Implementation;
  instructions?: string;
  tools: Tool[];
}

// How much of a stdio server's stderr is kept to explain why it failed.
const STDERR_TAIL_CHARS = 4000;
// How long a finished listing waits for an HTTP server to end its session.
const TERMINATE_SESSION_MS = 2000;

/** Lists every tool of one server; throws ListToolsError when it cannot be started, reached or read. */
export async function listServerTools(
  target: ListTarget,
  options: ListOptions,
): Promise<ServerListing> {
  const newClient = () =>
    new Client(
      { name: 'ahma-list-tools', version: packageJson.version },
      { capabilities: {}, jsonSchemaValidator: ACCEPT_ANY_OUTPUT },
    );
  if (target.kind === 'http') return listHttpTools(target, newClient, options);
  const client = newClient();
  const stderr = textTail(STDERR_TAIL_CHARS);
  const transport = createTransport(target, options, stderr.add);
  const context: FailureContext = {
    target,
    phase: 'connect',
    stderr,
    timeoutMs: options.timeoutMs,
  };
  client.onerror = (error) => {
    context.transportError ??= error;
  };

  const abort = new AbortController();
  const timer = setTimeout(() => {
    // Stopped before the abort: on a failed initialize the SDK starts closing at once and forgets
    // the process, which it would then wait 2 s for.
    stopProcess(transport);
    abort.abort();
  }, options.timeoutMs);
  const request: RequestOptions = { signal: abort.signal, timeout: options.timeoutMs };
  let failure: unknown;
  try {
    await client.connect(transport, request);
    context.phase = 'list';
    return await listingOf(client, request);
  } catch (error) {
    failure = error;
  } finally {
    clearTimeout(timer);
    await disconnect(client, transport, abort.signal.aborted);
  }
  throw toListToolsError(failure, { ...context, timedOut: abort.signal.aborted });
}

/**
 * An HTTP server: connected through @ahma/remote, which logs in when the server asks (the user's
 * time to authorize is not counted in --timeout: each request is bounded by it instead).
 */
async function listHttpTools(
  target: Extract<ListTarget, { kind: 'http' }>,
  newClient: () => Client,
  options: ListOptions,
): Promise<ServerListing> {
  const context: FailureContext = {
    target,
    phase: 'connect',
    stderr: textTail(0),
    timeoutMs: options.timeoutMs,
  };
  const request: RequestOptions = { timeout: options.timeoutMs };
  let connection;
  try {
    connection =
      target.bearer === undefined
        ? await connectHttp(newClient, { ...target.auth, url: target.url, request })
        : await connectWithBearer(newClient(), target.url, target.bearer, request);
  } catch (error) {
    throw toListToolsError(error, context);
  }
  const { client, transport } = connection;
  client.onerror = (error) => {
    context.transportError ??= error;
  };
  context.phase = 'list';
  try {
    return await listingOf(client, request);
  } catch (error) {
    throw toListToolsError(error, context);
  } finally {
    await disconnect(client, transport, false);
  }
}

/** --token-file: a static bearer token (an Ahma HTTP server's), no OAuth. */
async function connectWithBearer(
  client: Client,
  url: URL,
  token: string,
  request: RequestOptions,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  try {
    await client.connect(transport, request);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return { client, transport };
}

/** The command line or URL, as the user would recognise it in a message. */
export function describeTarget(target: ListTarget): string {
  if (target.kind === 'http') {
    if (target.url.password === '') return target.url.href;
    const shown = new URL(target.url.href);
    shown.password = '***';
    return shown.href;
  }
  return [target.command, ...target.args].map(shellQuote).join(' ');
}

/** What the connected server said about itself, and all its tools. */
async function listingOf(client: Client, request: RequestOptions): Promise<ServerListing> {
  const tools = await listAllTools(client, request);
  const listing: ServerListing = {
    server: client.getServerVersion() ?? { name: 'unknown', version: '' },
    tools,
  };
  const instructions = client.getInstructions();
  if (instructions !== undefined) listing.instructions = instructions;
  return listing;
}

async function listAllTools(client: Client, request: RequestOptions): Promise<Tool[]> {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    let page;
    try {
      page = await client.listTools(cursor === undefined ? undefined : { cursor }, request);
    } catch (error) {
      // A server that declares no tools capability may refuse tools/list: it simply has no tools.
      const noTools = client.getServerCapabilities()?.tools === undefined;
      if (noTools && error instanceof McpError && error.code === ErrorCode.MethodNotFound) break;
      throw error;
    }
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor !== undefined) {
      if (seen.has(cursor)) {
        throw new ListToolsError(
          'PROTOCOL_ERROR',
          `tools/list returned the cursor ${JSON.stringify(cursor)} twice (its pagination loops)`,
        );
      }
      seen.add(cursor);
    }
  } while (cursor !== undefined);
  return tools;
}

function createTransport(
  target: Extract<ListTarget, { kind: 'stdio' }>,
  options: ListOptions,
  onStderr: (text: string) => void,
): StdioClientTransport {
  const transport = new StdioClientTransport({
    command: target.command,
    args: [...target.args],
    // Like any command runner, the server gets the caller's whole environment (the SDK's default
    // passes only HOME, PATH and a few others, which drops API keys a server may need).
    env: inheritedEnvironment(options.env ?? process.env),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    // Kept, not shown: servers log to stderr, and it only matters when they fail.
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer | string) => onStderr(chunk.toString()));
  return transport;
}

async function disconnect(
  client: Client,
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  timedOut: boolean,
): Promise<void> {
  if (!timedOut && transport instanceof StreamableHTTPClientTransport) {
    await withinMs(TERMINATE_SESSION_MS, transport.terminateSession()).catch(() => undefined);
  }
  await client.close().catch(() => undefined);
}

/** SIGTERM for a stdio server that did not answer in time, instead of the SDK's 2 s grace. */
function stopProcess(transport: StdioClientTransport | StreamableHTTPClientTransport): void {
  if (!(transport instanceof StdioClientTransport) || transport.pid === null) return;
  try {
    process.kill(transport.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

interface FailureContext {
  target: ListTarget;
  phase: 'connect' | 'list';
  stderr: TextTail;
  timeoutMs: number;
  transportError?: unknown;
  timedOut?: boolean;
}

function toListToolsError(error: unknown, context: FailureContext): ListToolsError {
  const where = describeTarget(context.target);
  const fail = (code: ListToolsError['code'], cause: string) =>
    new ListToolsError(code, `${where}: ${cause}${stderrNote(context)}`, { cause: error });

  if (context.timedOut === true || isMcpError(error, ErrorCode.RequestTimeout)) {
    const doing = context.phase === 'connect' ? 'to the MCP initialize request' : 'to tools/list';
    const seconds = context.timeoutMs / 1000;
    const hint =
      context.target.kind === 'stdio'
        ? 'is it an MCP server speaking stdio? Some need an argument such as "stdio"; or raise --timeout'
        : 'raise --timeout, or check the URL';
    return fail(
      'TIMEOUT',
      `no answer ${doing} within ${seconds} s (${hint})${transportNote(context)}`,
    );
  }
  if (error instanceof ListToolsError) return fail(error.code, error.message);

  const issues = schemaIssues(error);
  if (issues !== undefined) {
    return fail(
      'PROTOCOL_ERROR',
      `the ${context.phase === 'connect' ? 'initialize' : 'tools/list'} reply does not follow the MCP schema: ${issues.join('; ')}`,
    );
  }
  return context.target.kind === 'stdio'
    ? stdioFailure(error, context, fail)
    : httpFailure(error, context, fail);
}

type Fail = (code: ListToolsError['code'], cause: string) => ListToolsError;

function stdioFailure(error: unknown, context: FailureContext, fail: Fail): ListToolsError {
  const code = errorCode(error);
  if (code === 'ENOENT') return fail('SPAWN_FAILED', 'cannot start it: command not found');
  if (code === 'EACCES') return fail('SPAWN_FAILED', 'cannot start it: permission denied');
  if (code !== undefined && 'syscall' in (error as object)) {
    return fail('SPAWN_FAILED', `cannot start it: ${messageOf(error)}`);
  }
  if (isMcpError(error, ErrorCode.ConnectionClosed) || messageOf(error) === 'Not connected') {
    const when =
      context.phase === 'connect' ? 'before answering initialize' : 'while listing tools';
    return fail('SERVER_EXITED', `the server exited ${when}${transportNote(context)}`);
  }
  return fail('PROTOCOL_ERROR', protocolCause(error, context));
}

function httpFailure(error: unknown, context: FailureContext, fail: Fail): ListToolsError {
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    return fail(
      'UNAUTHORIZED',
      `the server refused the authorization (HTTP ${error.code}); log in again after ` +
        `ahma-list-tools --logout ${describeTarget(context.target)}`,
    );
  }
  if (error instanceof AuthorizationFailed || error instanceof TokenFileError) {
    return fail('UNAUTHORIZED', error.message);
  }
  if (error instanceof OAuthError) {
    // The SDK's OAuth flow failed: discovery, registration, the code exchange or a refresh.
    const said = [error.errorCode, error.message].filter((part) => part !== '').join(': ');
    return fail('UNAUTHORIZED', `logging in to the server failed: ${oneLine(said)}`);
  }
  if (error instanceof Error && error.name === 'UnauthorizedError') {
    return fail('UNAUTHORIZED', `the server requires authorization: ${messageOf(error)}`);
  }
  if (error instanceof StreamableHTTPError && (error.code ?? 0) > 0) {
    const body = oneLine(
      // An HTML error page says the same in fewer words without its tags.
      error.message
        .replace(/^Streamable HTTP error: Error POSTing to endpoint:\s*/, '')
        .replace(/<!DOCTYPE[^>]*>|<title>.*?<\/title>|<[^>]*>/gis, ' '),
    );
    const hint =
      error.code === 404 || error.code === 405
        ? ' (is this the MCP endpoint, often ending in /mcp? Servers that only speak the older HTTP+SSE transport are not supported)'
        : '';
    return fail(
      'HTTP_ERROR',
      `the server answered HTTP ${error.code}${body === '' ? '' : `: ${body}`}${hint}`,
    );
  }
  if (error instanceof StreamableHTTPError) {
    return fail(
      'PROTOCOL_ERROR',
      `${error.message.replace(/^Streamable HTTP error: /, '')} (is this an MCP endpoint?)`,
    );
  }
  const network = networkCause(error);
  if (network !== undefined) return fail('UNREACHABLE', `cannot connect: ${network}`);
  if (error instanceof TypeError && error.message === 'fetch failed') {
    return fail('UNREACHABLE', `cannot connect: ${messageOf(error)}`);
  }
  return fail('PROTOCOL_ERROR', protocolCause(error, context));
}

function protocolCause(error: unknown, context: FailureContext): string {
  const request = context.phase === 'connect' ? 'initialize' : 'tools/list';
  if (error instanceof McpError)
    return `the server answered ${request} with an error: ${error.message}`;
  return `${request} failed: ${messageOf(error)}${transportNote(context)}`;
}

function transportNote(context: FailureContext): string {
  if (context.transportError === undefined) return '';
  const message = oneLine(messageOf(context.transportError));
  return context.target.kind === 'stdio' && context.transportError instanceof SyntaxError
    ? `; it wrote something that is not MCP to stdout (${message})`
    : `; first transport error: ${message}`;
}

function stderrNote(context: FailureContext): string {
  const text = context.stderr.text().trimEnd();
  return text === '' ? '' : `\nits stderr${context.stderr.truncated() ? ' (end)' : ''}:\n${text}`;
}

function isMcpError(error: unknown, code: ErrorCode): boolean {
  return error instanceof McpError && error.code === code;
}

function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

function inheritedEnvironment(
  from: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(from)) if (value !== undefined) env[key] = value;
  return env;
}

interface TextTail {
  add(text: string): void;
  text(): string;
  truncated(): boolean;
}

function textTail(limit: number): TextTail {
  let kept = '';
  let dropped = false;
  return {
    add: (text) => {
      kept += text;
      if (kept.length > limit) {
        kept = kept.slice(-limit);
        dropped = true;
      }
    },
    text: () => kept,
    truncated: () => dropped,
  };
}

async function withinMs<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
