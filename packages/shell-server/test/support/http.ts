// HTTP test support: the HTTP server of `ahma-shell --mode http` started in the test process on a
// free port (the same runtime and server the binary makes), the built binary started with
// `--mode http --http-port 0`, the SDK's real Streamable HTTP and legacy SSE clients connected to
// either, and raw requests for the header rules. Everything is stopped by E2E.cleanup().
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HttpServer, HttpServerOptions } from '../../src/transports/http/server.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { BIN, serverSetup, waitFor, type E2E, type RunningServer, type Scope } from './harness.js';

export interface InProcessHttp {
  readonly url: string;
  readonly port: number;
  readonly server: HttpServer;
  readonly runtime: Runtime;
  /** The log with --log-to-stderr, and R8B's echo, as the binary would print them. */
  stderr(): string;
}

/**
 * `ahma-shell --mode http --sandbox-scope <scope> …args` in this process, on 127.0.0.1 and a free
 * port; `options` override the server's (limits, token, address). An isolated server keeps no
 * spare process unless `options.spareProcess` asks for one.
 */
export async function httpServer(
  e2e: E2E,
  scope: Scope,
  args: readonly string[] = [],
  options: Partial<HttpServerOptions> = {},
): Promise<InProcessHttp> {
  // Loaded when first used: a file that only drives the binary does not compile the server.
  const [{ startHttpServer }, { createRuntime }] = await Promise.all([
    import('../../src/transports/http/server.js'),
    import('../../src/runtime/runtime.js'),
  ]);
  const setup = await serverSetup(scope, ['--mode', 'http', '--http-port', '0', ...args]);
  const { options: parsed, logger } = setup;
  const runtime = await createRuntime({ options: parsed, env: scope.env, cwd: scope.dir, logger });
  let server: HttpServer;
  try {
    server = await startHttpServer(runtime, {
      host: parsed.httpHost,
      port: parsed.httpPort,
      token: undefined,
      echo: parsed.logToStderr ? { write: setup.writeStderr, colour: false } : undefined,
      // A spare process costs every isolated server a process start: only the tests of it (and
      // the binary's, which keep the default) have one.
      spareProcess: false,
      ...options,
    });
  } catch (error) {
    await runtime.close();
    throw error;
  }
  e2e.onCleanup(async () => {
    await server.close();
    await runtime.close();
  });
  return { url: server.url, port: server.port, server, runtime, stderr: setup.stderr };
}

/**
 * `ahma-shell --mode http --session-isolation --sandbox-scope <scope> …args` in this process, its
 * isolation settings made as serve.ts makes them; `options` as httpServer's.
 */
export async function isolatedHttpServer(
  e2e: E2E,
  scope: Scope,
  args: readonly string[] = [],
  options: Partial<HttpServerOptions> = {},
): Promise<InProcessHttp> {
  const [{ isolatedChildCommand }, { rootPolicy }] = await Promise.all([
    import('../../src/isolation/child-command.js'),
    import('../../src/isolation/root-scope.js'),
  ]);
  const { options: parsed } = await serverSetup(scope, ['--mode', 'http', ...args]);
  const isolation = {
    defaultScope: scope.dir,
    roots: await rootPolicy({
      allowedRoots: [],
      scope: scope.dir,
      env: scope.env,
      privatePaths: [],
    }),
    env: scope.env,
    childCommand: isolatedChildCommand(parsed, scope.dir),
  };
  return httpServer(e2e, scope, ['--session-isolation', ...args], { isolation, ...options });
}

export interface ClientOptions {
  /** The legacy HTTP+SSE transport (GET /sse, then POST its endpoint). */
  readonly legacy?: boolean;
  /** Headers every request carries (Authorization). */
  readonly headers?: Record<string, string>;
}

/**
 * The SDK's real Client over Streamable HTTP (or legacy SSE) to `url`, carrying the server's
 * token (an HttpBinary's headers) unless `options.headers` says otherwise.
 */
export function httpClient(
  e2e: E2E,
  url: string,
  server: { stderr: () => string; pid?: number; headers?: Record<string, string> },
  options: ClientOptions = {},
): Promise<RunningServer> {
  const headers = options.headers ?? server.headers;
  const requestInit = headers === undefined ? {} : { requestInit: { headers } };
  const transport = options.legacy
    ? new SSEClientTransport(new URL(url), requestInit)
    : new StreamableHTTPClientTransport(new URL(url), requestInit);
  return e2e.connect(transport, { pid: server.pid ?? process.pid, stderr: server.stderr });
}

export interface HttpBinary {
  readonly pid: number;
  readonly url: string;
  /** The token the server made (or was given) and printed the file of; undefined without auth. */
  readonly token: string | undefined;
  /** `Authorization: Bearer <token>` (empty without a token): what every request must carry. */
  readonly headers: Record<string, string>;
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The built binary: `ahma-shell --mode http --http-port 0 --sandbox-scope <scope> …args`. */
export async function httpBinary(
  e2e: E2E,
  scope: Scope,
  args: readonly string[] = [],
): Promise<HttpBinary> {
  const child = e2e.track(
    spawn(
      process.execPath,
      [BIN, '--mode', 'http', '--http-port', '0', '--sandbox-scope', scope.dir, ...args],
      { cwd: scope.dir, env: scope.env, stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const url = await waitFor(
    () => /ahma-shell: listening on (http:\/\/\S+)\n/.exec(stderr)?.[1],
    'the server to print its URL',
    45_000, // generous: the tests of a file run at once, and a busy machine starts slowly
  );
  if (child.pid === undefined) throw new Error('the server has no pid');
  const tokenFile = /the token is in (\S+)\n/.exec(stderr)?.[1];
  const token =
    tokenFile === undefined
      ? /AHMA_HTTP_TOKEN's value/.test(stderr)
        ? scope.env['AHMA_HTTP_TOKEN']
        : undefined
      : (await readFile(tokenFile, 'utf8')).trim();
  const headers: Record<string, string> =
    token === undefined ? {} : { authorization: `Bearer ${token}` };
  return { pid: child.pid, url, token, headers, stderr: () => stderr, exited };
}

/** An initialize request of a raw client. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'ahma-raw-http', version: '1.0.0' },
  },
} as const;

/** POSTs one JSON-RPC message (or any body) with the given headers; Content-Type JSON unless set. */
export function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A raw session: initialize (JSON), then notifications/initialized; returns its id. */
export async function rawSession(
  url: string,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await post(url, INITIALIZE, { accept: 'application/json', ...headers });
  if (response.status !== 200)
    throw new Error(`initialize: ${String(response.status)} ${await response.text()}`);
  await response.text();
  const id = response.headers.get('mcp-session-id');
  if (id === null) throw new Error('initialize: no Mcp-Session-Id');
  const initialized = await post(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': id, ...headers },
  );
  if (initialized.status !== 202) throw new Error(`initialized: ${String(initialized.status)}`);
  return id;
}

/** The `data:` of each event of an SSE text, parsed, with the event's id. */
export function sseEvents(
  text: string,
): { id: string | undefined; event: string | undefined; data: unknown }[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).replace(/^ /, ''));
      const data = field('data').join('\n');
      let parsed: unknown = data;
      try {
        parsed = data === '' ? undefined : JSON.parse(data);
      } catch {
        // Not JSON (the legacy endpoint event): kept as text.
      }
      return { id: field('id')[0], event: field('event')[0], data: parsed };
    });
}

export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: unknown;
}

export interface OpenStream {
  readonly status: number;
  readonly headers: Headers;
  /** Events received so far (comments and empty priming events left out). */
  readonly events: SseEvent[];
  /** Waits for an event matching `probe`. */
  next(probe: (event: SseEvent) => boolean, what: string): Promise<SseEvent>;
  /** Drops the connection, as a network failure would. */
  close(): void;
}

/** A raw GET of a session's SSE stream, read as it comes. */
export async function openStream(
  url: string,
  headers: Record<string, string>,
): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  if (response.ok && response.body !== null) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          const end = buffer.lastIndexOf('\n\n');
          if (end === -1) continue;
          events.push(...sseEvents(buffer.slice(0, end + 2)).filter((e) => e.data !== undefined));
          buffer = buffer.slice(end + 2);
        }
      } catch {
        // Aborted by close().
      }
    })();
  }
  return {
    status: response.status,
    headers: response.headers,
    events,
    next: (probe, what) => waitFor(() => events.find(probe), what),
    close: () => controller.abort(),
  };
}

/** The notifications/message of a completion push naming `operationId`. */
export function isPushOf(operationId: string): (event: SseEvent) => boolean {
  return (event) => {
    const message = event.data as {
      method?: string;
      params?: { data?: { operation_id?: string } };
    };
    return (
      message.method === 'notifications/message' &&
      message.params?.data?.operation_id === operationId
    );
  };
}

/** A tools/call of a raw session, answered in JSON; returns its result. */
export async function callTool(
  url: string,
  session: string,
  name: string,
  args: Record<string, unknown>,
  id = 1,
): Promise<{ structuredContent?: Record<string, unknown>; isError?: boolean }> {
  const response = await post(
    url,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
    { 'mcp-session-id': session, accept: 'application/json' },
  );
  const body = (await response.json()) as {
    result?: { structuredContent?: Record<string, unknown>; isError?: boolean };
    error?: unknown;
  };
  if (body.result === undefined) throw new Error(`tools/call ${name}: ${JSON.stringify(body)}`);
  return body.result;
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * One request over node:http, whose headers (Host included) are sent exactly as given; for the
 * guard's rules, which fetch would not let a test break.
 */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers ?? {} },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}
