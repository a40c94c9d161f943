// SPEC §6: every transport runs one check on what a client sends (jsonrpc/incoming.ts), so a message is
// refused alike over stdio and HTTP (Streamable, legacy HTTP+SSE, the 2026-07-28 era): bytes that
// are not UTF-8 get -32700 and nothing runs (a command runs exactly as sent or not at all), JSON
// that is not JSON-RPC gets -32600, wrong protocol params -32602 with one line naming the field
// (never the SDK's -32603 zod dump), and a batch holds at most 100 messages. Stdio through the
// built binary (raw bytes on its stdin), HTTP through the server in this process and the binary.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { E2E, RawSession, waitFor, type Scope } from '../support/harness.js';
import {
  httpBinary,
  httpServer,
  INITIALIZE,
  openStream,
  post,
  rawSession,
  sseEvents,
} from '../support/http.js';

type Message = Record<string, unknown>;

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

/** A stdio server (the built binary), initialized. */
async function stdio(e2e: E2E, scope?: Scope): Promise<RawSession> {
  const session = new RawSession(e2e, scope ?? (await e2e.scope()), []);
  await session.initialize();
  return session;
}

/** Writes raw bytes to a stdio server's stdin. */
function write(session: RawSession, bytes: string | Buffer): Promise<void> {
  const stdin = session.child.stdin;
  if (stdin === null) throw new Error('no stdin');
  return new Promise((resolve, reject) =>
    stdin.write(bytes, (error) => (error ? reject(error) : resolve())),
  );
}

/** Every line a stdio server wrote, parsed. */
const lines = (session: RawSession): unknown[] =>
  session.stdoutLines.map((line) => JSON.parse(line) as unknown);

/** The first message a stdio server wrote with this id (null included). */
function answerTo(session: RawSession, id: string | number | null): Promise<Message> {
  return waitFor(
    () =>
      lines(session).find(
        (line): line is Message => !Array.isArray(line) && (line as Message)['id'] === id,
      ),
    `the answer with id ${JSON.stringify(id)}`,
  );
}

/** A request's JSON, as a client would write it. */
const request = (id: string | number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/**
 * A Synchronous sandboxed_shell call that would create `marker` in the scope, whose command also
 * holds the bytes 0xff 0xfe: not UTF-8.
 */
function notUtf8Call(id: number, marker: string, extra: object = {}): Buffer {
  const [head, tail] = request(id, 'tools/call', {
    name: 'sandboxed_shell',
    arguments: { command: `touch ${marker} # BYTES`, execution_mode: 'Synchronous' },
    ...extra,
  }).split('BYTES');
  return Buffer.concat([
    Buffer.from(head ?? ''),
    Buffer.from([0xff, 0xfe]),
    Buffer.from(tail ?? ''),
  ]);
}

/** The wrong-typed params of served methods and the one line naming the field. */
const WRONG_PARAMS: readonly (readonly [string, unknown, string])[] = [
  ['tools/call', { name: 5 }, 'tools/call: "name" must be a string'],
  ['tools/list', { cursor: 5 }, 'tools/list: "cursor" must be a string'],
  ['tasks/get', { taskId: 5 }, 'tasks/get: "taskId" must be a string'],
  ['tasks/result', {}, 'tasks/result: "taskId" is required'],
  ['tasks/cancel', { taskId: ['t'] }, 'tasks/cancel: "taskId" must be a string'],
  ['tasks/list', { cursor: 5 }, 'tasks/list: "cursor" must be a string'],
];

/** The one refusal of a batch over the limit, on every transport. */
const TOO_MANY = {
  code: -32600,
  message: 'Invalid Request: a batch may hold at most 100 messages, this one holds 101',
};

const pings = (count: number) =>
  `[${Array.from({ length: count }, (_, i) => request(`p${String(i)}`, 'ping')).join(',')}]`;

/** A POST's JSON answer: its status and body. */
async function json(response: Promise<Response>): Promise<{ status: number; body: unknown }> {
  const answer = await response;
  return { status: answer.status, body: (await answer.json()) as unknown };
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

/** The headers of a 2026-07-28 request (SEP-2243 mirrors the method in a header). */
const modernHeaders = (method: string) => ({
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
});

describe.concurrent('one check on every transport (SPEC §6)', { timeout: 60_000 }, () => {
  it('SPEC §6: over stdio, wrong-typed params of tasks/get, tasks/result, tasks/cancel and tasks/list get -32602 naming the field, like tools/call', async (context) => {
    const session = await stdio(setup(context));
    let id = 100;
    for (const [method, params, message] of WRONG_PARAMS) {
      id += 1;
      await write(session, `${request(id, method, params)}\n`);
      context
        .expect((await answerTo(session, id))['error'], method)
        .toEqual({ code: -32602, message });
    }
  });

  it('SPEC §6, R8.3: over Streamable HTTP, wrong-typed params of every served method get -32602 naming the field, as JSON or on the SSE stream as Accept asks, and in a batch beside the other answers', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope());
    const session = await rawSession(url);
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
    let id = 0;
    for (const [method, params, message] of WRONG_PARAMS) {
      id += 1;
      const answer = await json(
        post(url, request(id, method, params), { ...headers, accept: 'application/json' }),
      );
      expect(answer, method).toEqual({
        status: 200,
        body: { jsonrpc: '2.0', id, error: { code: -32602, message } },
      });
    }
    // An SSE client gets its answer on the stream, as any other.
    const streamed = await post(url, request('sse', 'tools/call', { name: 5 }), {
      ...headers,
      accept: 'application/json, text/event-stream',
    });
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(sseEvents(await streamed.text()).map((event) => event.data)).toContainEqual({
      jsonrpc: '2.0',
      id: 'sse',
      error: { code: -32602, message: 'tools/call: "name" must be a string' },
    });
    // In a batch, the refused element is answered beside the others (as over stdio).
    const batch = await json(
      post(url, `[${request('b1', 'ping')},${request('b2', 'tools/call', { name: 5 })}]`, {
        ...headers,
        accept: 'application/json',
      }),
    );
    expect(batch.status).toBe(200);
    expect(batch.body).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 'b1', result: {} },
        {
          jsonrpc: '2.0',
          id: 'b2',
          error: { code: -32602, message: 'tools/call: "name" must be a string' },
        },
      ]),
    );
  });

  it('SPEC §6: over HTTP, an initialize with wrong params gets -32602 naming the field (no session is opened)', async (context) => {
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope());
    const response = await post(
      url,
      { ...INITIALIZE, params: { ...INITIALIZE.params, clientInfo: { name: 'x' } } },
      { accept: 'application/json' },
    );
    context.expect(response.headers.get('mcp-session-id')).toBeNull();
    context.expect({ status: response.status, body: await response.json() }).toEqual({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: 0,
        error: { code: -32602, message: 'initialize: "clientInfo.version" is required' },
      },
    });
  });

  it('SPEC §6, R8C: over legacy HTTP+SSE, wrong-typed params get -32602 naming the field on the session stream', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope());
    const sse = url.replace(/\/mcp$/, '/sse');
    const stream = await openStream(sse, {});
    context.onTestFinished(() => stream.close());
    const endpoint = await stream.next((event) => event.event === 'endpoint', 'the endpoint');
    const postUrl = new URL(String(endpoint.data), sse).toString();
    expect((await post(postUrl, INITIALIZE)).status).toBe(202);
    await stream.next((event) => (event.data as Message)['id'] === 0, 'the initialize answer');
    for (const [index, [method, params, message]] of WRONG_PARAMS.entries()) {
      const id = index + 1;
      expect((await post(postUrl, request(id, method, params))).status).toBe(202);
      const answer = await stream.next(
        (event) => (event.data as Message)['id'] === id,
        `the answer to ${method}`,
      );
      expect(answer.data, method).toEqual({ jsonrpc: '2.0', id, error: { code: -32602, message } });
    }
    // JSON that is not JSON-RPC is refused at once, as on /mcp.
    expect(await json(post(postUrl, '"text"'))).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'Invalid Request: a message must be a JSON object' },
      },
    });
  });

  it('SPEC §6, SPEC §12: over HTTP in the 2026-07-28 era, wrong-typed params get -32602 naming the field; the methods that era removed stay -32601 whatever their params', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const { url } = await httpServer(e2e, await e2e.scope());
    let id = 0;
    for (const [method, params, message] of [
      ['tools/list', { cursor: 5 }, 'tools/list: "cursor" must be a string'],
      ['tools/call', { name: 5 }, 'tools/call: "name" must be a string'],
      ['tasks/get', { taskId: 5 }, 'tasks/get: "taskId" must be a string'],
    ] as const) {
      id += 1;
      const answer = await json(
        post(
          url,
          { jsonrpc: '2.0', id, method, params: { ...params, _meta: MODERN_META } },
          modernHeaders(method),
        ),
      );
      expect(answer, method).toEqual({
        status: 200,
        body: { jsonrpc: '2.0', id, error: { code: -32602, message } },
      });
    }
    // SEP-2575: initialize and logging/setLevel are gone from this era, whatever they carry.
    for (const [method, params] of [
      ['initialize', { protocolVersion: 5 }],
      ['logging/setLevel', { level: 'loud' }],
    ] as const) {
      id += 1;
      const answer = await json(
        post(
          url,
          { jsonrpc: '2.0', id, method, params: { ...params, _meta: MODERN_META } },
          modernHeaders(method),
        ),
      );
      expect(answer, method).toMatchObject({ status: 404, body: { id, error: { code: -32601 } } });
    }
  });

  it('SPEC §6, R8.3: over HTTP, JSON that is not JSON-RPC gets -32600 (400) as over stdio, with its id when it has one, in a session and without one; a batch holding such a message is refused whole, naming it', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const scope = await e2e.scope();
    const { url } = await httpServer(e2e, scope);
    const session = await rawSession(url);
    const stdioSession = await stdio(e2e, scope);
    const cases = [
      ['{"jsonrpc":"2.0","id":7,"method":5}', 7, 'Invalid Request: "method" must be a string'],
      ['"text"', null, 'Invalid Request: a message must be a JSON object'],
      ['{"jsonrpc":"1.0","id":8,"method":"ping"}', 8, 'Invalid Request: "jsonrpc" must be "2.0"'],
    ] as const;
    for (const [body, id, message] of cases) {
      const expected = { jsonrpc: '2.0', id, error: { code: -32600, message } };
      for (const headers of [{ 'mcp-session-id': session }, {}]) {
        expect(await json(post(url, body, headers)), `${body} ${JSON.stringify(headers)}`).toEqual({
          status: 400,
          body: expected,
        });
      }
      const before = stdioSession.stdoutLines.length;
      await write(stdioSession, `${body}\n`);
      await waitFor(() => stdioSession.stdoutLines.length > before, 'the stdio answer');
      expect(JSON.parse(stdioSession.stdoutLines[before] ?? ''), body).toEqual(expected);
    }
    expect(
      await json(post(url, `[${request(1, 'ping')},5]`, { 'mcp-session-id': session })),
    ).toEqual({
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: message 2 of the batch: a message must be a JSON object',
        },
      },
    });
  });

  it('SPEC §6: over stdio, a request whose bytes are not UTF-8 gets -32700 and its command never runs; the session goes on', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const scope = await e2e.scope();
    const session = await stdio(e2e, scope);
    await write(session, Buffer.concat([notUtf8Call(5, 'ran-stdio'), Buffer.from('\n')]));
    // The first answer after it: with the call run (Synchronous), its result; refused, the error.
    const answer = await waitFor(
      () =>
        lines(session).find((line) => [5, null].includes((line as Message)['id'] as number | null)),
      'the answer to the call',
    );
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the message is not valid UTF-8' },
    });
    // The session goes on, and the same call in valid UTF-8 runs (so the marker would be there).
    const valid = await session.request(6, 'tools/call', {
      name: 'sandboxed_shell',
      arguments: { command: 'touch ran-valid', execution_mode: 'Synchronous' },
    });
    expect(valid['result']).toMatchObject({ structuredContent: { status: 'completed' } });
    expect(existsSync(join(scope.dir, 'ran-valid'))).toBe(true);
    expect(existsSync(join(scope.dir, 'ran-stdio'))).toBe(false);
  });

  it('SPEC §6: over stdio, a lone UTF-16 surrogate escape in an argument (valid JSON, no UTF-8 text) gets -32602 naming the field, and nothing runs', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const scope = await e2e.scope();
    const session = await stdio(e2e, scope);
    // JSON.stringify writes a lone surrogate as the escape \ud800, as a client would.
    const refused = await session.request(7, 'tools/call', {
      name: 'sandboxed_shell',
      arguments: { command: 'touch ran-surrogate # \ud800', execution_mode: 'Synchronous' },
    });
    expect(refused['error']).toEqual({
      code: -32602,
      message:
        'Invalid params: params.arguments.command holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which no command can be given as sent',
    });
    // A pair (an emoji) is text like any other.
    const valid = await session.request(8, 'tools/call', {
      name: 'sandboxed_shell',
      arguments: { command: 'touch ran-pair # \ud83d\ude00', execution_mode: 'Synchronous' },
    });
    expect(valid['result']).toMatchObject({ structuredContent: { status: 'completed' } });
    expect(existsSync(join(scope.dir, 'ran-pair'))).toBe(true);
    expect(existsSync(join(scope.dir, 'ran-surrogate'))).toBe(false);
  });

  it('SPEC §6, R8.3: over HTTP (the binary, with its token), a body that is not UTF-8 gets -32700 and its command never runs, in a session and in the 2026-07-28 era', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const scope = await e2e.scope();
    const server = await httpBinary(e2e, scope);
    const session = await rawSession(server.url, server.headers);
    const refused = {
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: 'Parse error: the message is not valid UTF-8' },
      },
    };
    const send = (body: Buffer, headers: Record<string, string>) =>
      json(
        fetch(server.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...server.headers, ...headers },
          body,
        }),
      );
    expect(
      await send(notUtf8Call(1, 'ran-session'), {
        'mcp-session-id': session,
        accept: 'application/json',
      }),
    ).toEqual(refused);
    // The 2026-07-28 era: the same call with the era's envelope.
    expect(
      await send(notUtf8Call(2, 'ran-modern', { _meta: MODERN_META }), {
        ...modernHeaders('tools/call'),
        'mcp-name': 'sandboxed_shell',
      }),
    ).toEqual(refused);
    // A valid call runs: the marker would be there had either run.
    const valid = await json(
      post(
        server.url,
        request(3, 'tools/call', {
          name: 'sandboxed_shell',
          arguments: { command: 'touch ran-valid', execution_mode: 'Synchronous' },
        }),
        { ...server.headers, 'mcp-session-id': session, accept: 'application/json' },
      ),
    );
    expect(valid.body).toMatchObject({ result: { structuredContent: { status: 'completed' } } });
    expect(existsSync(join(scope.dir, 'ran-valid'))).toBe(true);
    expect(existsSync(join(scope.dir, 'ran-session'))).toBe(false);
    expect(existsSync(join(scope.dir, 'ran-modern'))).toBe(false);
  });

  it('SPEC §6: a batch holds at most 100 messages on every transport: 101 get one -32600 naming the limit, over stdio and HTTP alike; 100 are answered', async (context) => {
    const { expect } = context;
    const e2e = setup(context);
    const scope = await e2e.scope();
    const { url } = await httpServer(e2e, scope);
    const session = await rawSession(url);
    const headers = { 'mcp-session-id': session, accept: 'application/json' };
    expect(await json(post(url, pings(101), headers))).toEqual({
      status: 400,
      body: { jsonrpc: '2.0', id: null, error: TOO_MANY },
    });
    const hundred = await json(post(url, pings(100), headers));
    expect(hundred.status).toBe(200);
    expect(hundred.body).toHaveLength(100);

    const raw = await stdio(e2e, scope);
    await write(raw, `${pings(101)}\n`);
    expect(await answerTo(raw, null)).toEqual({ jsonrpc: '2.0', id: null, error: TOO_MANY });
    await write(raw, `${pings(100)}\n`);
    const answer = await waitFor(
      () => lines(raw).find((line): line is Message[] => Array.isArray(line)),
      'the answer to the batch of 100',
    );
    expect(answer).toHaveLength(100);
  });
});
