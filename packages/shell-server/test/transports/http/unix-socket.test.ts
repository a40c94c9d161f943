// `--http-socket PATH` (R8.11): the HTTP endpoints on a unix socket, for the server's own uid
// without a token, reached by the SDK's real Streamable HTTP client (its fetch sent over the
// socket with node:http); the socket's directory (made 0700, refused when others can write it),
// what is already at PATH (a stale socket is replaced, a live one or a non-socket refused and left
// alone), and its removal at close only while it is still ours. The refusals are checked on the
// listener alone; another uid's refusal by the peer check is in test/red-team/http-socket.test.ts.
import { spawn } from 'node:child_process';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { describe, it, type TestContext } from 'vitest';
import { RefusalError } from '../../../src/jsonrpc/refusal.js';
import { listenUnixSocket } from '../../../src/transports/http/unix-socket.js';
import { BIN, E2E, structured, waitFor, type CommandResult } from '../../support/harness.js';
import { httpServer, INITIALIZE, post } from '../../support/http.js';

const silent = pino({ level: 'silent' });

/** A fresh E2E for one concurrent test, cleaned up when it ends, and a private directory. */
async function setup(context: TestContext): Promise<{ e2e: E2E; dir: string }> {
  const e2e = new E2E();
  // Short: a unix socket's path is at most 107 bytes.
  const dir = await mkdtemp(join(tmpdir(), 'us-'));
  context.onTestFinished(async () => {
    await e2e.cleanup();
    await rm(dir, { recursive: true, force: true });
  });
  return { e2e, dir };
}

/** The SDK's fetch, sent over the unix socket at `socketPath` (the URL gives only the path). */
function unixFetch(socketPath: string): FetchLike {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const request = httpRequest(
        {
          socketPath,
          path: `${target.pathname}${target.search}`,
          method: init.method ?? 'GET',
          headers: Object.fromEntries(new Headers(init.headers)),
        },
        (response) => {
          const status = response.statusCode ?? 0;
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            for (const each of [value ?? []].flat()) headers.append(name, each);
          }
          const empty = [204, 205, 304].includes(status);
          const body = empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
          resolve(new Response(body, { status, headers }));
        },
      );
      request.on('error', reject);
      init.signal?.addEventListener('abort', () => request.destroy(), { once: true });
      request.end(typeof init.body === 'string' ? init.body : undefined);
    });
}

/** One raw request over the socket: status and body. */
function socketRequest(
  socketPath: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        socketPath,
        path: '/mcp',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

function listen(server: NetServer, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
}

/**
 * A socket file nobody listens on, as a server that was killed leaves it: bound under another
 * name and renamed, so closing the listener (which unlinks the name it bound) leaves it behind.
 */
async function staleSocket(path: string): Promise<void> {
  const server = createNetServer();
  await listen(server, `${path}.bound`);
  await rename(`${path}.bound`, path);
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** listenUnixSocket on its own (the refusals need no MCP server behind it). */
async function listenAlone(context: TestContext, path: string): Promise<NetServer> {
  const unix = await listenUnixSocket(createHttpServer(), path, silent);
  context.onTestFinished(() => new Promise<void>((resolve) => unix.close(() => resolve())));
  return unix;
}

const mode = async (path: string) => (await lstat(path)).mode & 0o7777;
const isRoot = process.getuid?.() === 0;

describe.concurrent('the unix socket listener', () => {
  it('R8.11: tools/call works through the socket without a token, while TCP requires the token', async (context) => {
    const { e2e, dir } = await setup(context);
    const socket = join(dir, 'ahma.sock');
    const http = await httpServer(e2e, await e2e.scope(), [], { socket, token: 'x' });
    const tcp = await post(http.url, INITIALIZE, { accept: 'application/json' });
    context.expect(tcp.status).toBe(401);
    const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      fetch: unixFetch(socket),
    });
    const client = await e2e.connect(transport, { pid: process.pid, stderr: http.stderr });
    const result = await client.call('sandboxed_shell', {
      command: 'echo through-the-socket',
      execution_mode: 'Synchronous',
    });
    context.expect(structured<CommandResult>(result).output).toBe('through-the-socket\n');
    // The token still opens TCP.
    const authorized = await post(http.url, INITIALIZE, {
      accept: 'application/json',
      authorization: 'Bearer x',
    });
    context.expect(authorized.status).toBe(200);
  });

  it('R8.11: forty connections at once are each checked and answered', async (context) => {
    const { e2e, dir } = await setup(context);
    const socket = join(dir, 'ahma.sock');
    await httpServer(e2e, await e2e.scope(), [], { socket });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => socketRequest(socket, INITIALIZE, { connection: 'close' })),
    );
    context.expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  });

  it('R8.11: a missing directory is created 0700 (its missing parents too), the socket is 0600 and is removed at close', async (context) => {
    const { dir } = await setup(context);
    const socket = join(dir, 'a', 'b', 'ahma.sock');
    const unix = await listenUnixSocket(createHttpServer(), socket, silent);
    context.expect(await mode(join(dir, 'a'))).toBe(0o700);
    context.expect(await mode(join(dir, 'a', 'b'))).toBe(0o700);
    context.expect((await lstat(socket)).isSocket()).toBe(true);
    context.expect(await mode(socket)).toBe(0o600);
    await new Promise<void>((resolve) => unix.close(() => resolve()));
    await context.expect(lstat(socket)).rejects.toThrow(/ENOENT/);
  });

  it.for([
    ['world-writable and sticky, like /tmp', 0o1777],
    ['world-writable', 0o777],
    ['group-writable', 0o770],
  ] as const)('R8.11: a %s directory is refused, naming it', async ([, dirMode], context) => {
    const { dir } = await setup(context);
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, dirMode);
    const socket = join(shared, 'ahma.sock');
    const refused = listenAlone(context, socket);
    await context
      .expect(refused)
      .rejects.toThrow(`the directory ${shared} can be written by others`);
    // The CLI prints a refusal as one line (no stack), by its class.
    await context.expect(refused).rejects.toBeInstanceOf(RefusalError);
    await context.expect(lstat(socket)).rejects.toThrow(/ENOENT/);
  });

  it('R8.11: a directory above the socket that others can write (not sticky) is refused', async (context) => {
    const { dir } = await setup(context);
    const open = join(dir, 'open');
    await mkdir(join(open, 'mine'), { recursive: true });
    await chmod(open, 0o777);
    await chmod(join(open, 'mine'), 0o700);
    await context
      .expect(listenAlone(context, join(open, 'mine', 'ahma.sock')))
      .rejects.toThrow(`the directory ${open} above the socket can be written by others`);
  });

  it.skipIf(!isRoot)(
    'R8.11: a directory owned by another uid is refused (test as root)',
    async (context) => {
      const { dir } = await setup(context);
      const theirs = join(dir, 'theirs');
      await mkdir(theirs, { mode: 0o700 });
      await chown(theirs, 65534, 65534);
      await context
        .expect(listenAlone(context, join(theirs, 'ahma.sock')))
        .rejects.toThrow(`the directory ${theirs} is owned by uid 65534`);
    },
  );

  it('R8.11: a socket directory that is a file is refused', async (context) => {
    const { dir } = await setup(context);
    const file = join(dir, 'file');
    await writeFile(file, 'x');
    await context
      .expect(listenAlone(context, join(file, 'ahma.sock')))
      .rejects.toThrow(`${file} is not a directory`);
  });

  it('R8.11: a path too long for sun_path (108 bytes) is refused', async (context) => {
    const { dir } = await setup(context);
    const socket = join(dir, 'x'.repeat(120), 'ahma.sock');
    await context
      .expect(listenAlone(context, socket))
      .rejects.toThrow(/too long for a unix socket/);
  });

  it('R8.11: a stale socket (nobody listens) is replaced, and the server answers on it', async (context) => {
    const { e2e, dir } = await setup(context);
    const socket = join(dir, 'ahma.sock');
    await staleSocket(socket);
    const before = await lstat(socket);
    const http = await httpServer(e2e, await e2e.scope(), [], { socket });
    context.expect((await lstat(socket)).ino).not.toBe(before.ino);
    const answer = await socketRequest(socket, INITIALIZE);
    context.expect(answer.status, answer.body).toBe(200);
    context.expect(http.server.socket).toBe(socket);
  });

  it('R8.11: a live socket is refused ("another server listens") and keeps serving', async (context) => {
    const { dir } = await setup(context);
    const socket = join(dir, 'ahma.sock');
    // Its connections may be reset by the listener's probe, which reads nothing.
    const other = createNetServer((connection) => {
      connection.on('error', () => undefined);
      connection.end('other\n');
    });
    await listen(other, socket);
    context.onTestFinished(() => new Promise<void>((resolve) => other.close(() => resolve())));
    await context
      .expect(listenAlone(context, socket))
      .rejects.toThrow(`another server listens on ${socket}`);
    context.expect((await lstat(socket)).isSocket()).toBe(true);
    context.expect(other.listening).toBe(true);
  });

  it.for([
    ['a file', (path: string) => writeFile(path, 'keep me\n')],
    ['a directory', (path: string) => mkdir(path)],
    ['a symbolic link', (path: string) => symlink('/nonexistent', path)],
  ] as const)(
    'R8.11: %s at the path is refused and never removed',
    async ([kind, make], context) => {
      const { dir } = await setup(context);
      const socket = join(dir, 'ahma.sock');
      await make(socket);
      const before = await lstat(socket);
      await context
        .expect(listenAlone(context, socket))
        .rejects.toThrow(`${socket} exists and is ${kind}, not a socket`);
      const after = await lstat(socket);
      context.expect([after.ino, after.mode]).toEqual([before.ino, before.mode]);
      if (kind === 'a file') context.expect(await readFile(socket, 'utf8')).toBe('keep me\n');
    },
  );

  it('R8.11: at close, a socket that replaced ours at the path is left alone', async (context) => {
    const { dir } = await setup(context);
    const socket = join(dir, 'ahma.sock');
    const unix = await listenUnixSocket(createHttpServer(), socket, silent);
    await rename(socket, join(dir, 'moved.sock'));
    await staleSocket(socket);
    const replacement = await lstat(socket);
    await new Promise<void>((resolve) => unix.close(() => resolve()));
    context.expect((await lstat(socket)).ino).toBe(replacement.ino);
  });

  it('R8.11: `--http-port none --http-socket PATH` (the built binary) serves the socket only', async (context) => {
    const { e2e, dir } = await setup(context);
    const scope = await e2e.scope();
    const socket = join(dir, 'ahma.sock');
    const child = e2e.track(
      spawn(
        process.execPath,
        [
          BIN,
          '--mode',
          'http',
          '--http-port',
          'none',
          '--http-socket',
          socket,
          '--sandbox-scope',
          scope.dir,
        ],
        { cwd: scope.dir, env: scope.env, stdio: ['ignore', 'ignore', 'pipe'] },
      ),
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await waitFor(() => /listening on/.test(stderr), 'the server to listen', 15_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; stderr: ${stderr}`);
      },
    );
    const answer = await socketRequest(socket, INITIALIZE);
    context.expect(answer.status, answer.body).toBe(200);
    context.expect(stderr).not.toMatch(/listening on http:\/\/127\.0\.0\.1/);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    await context.expect(lstat(socket)).rejects.toThrow(/ENOENT/);
  });
});
