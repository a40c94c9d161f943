// SPEC §6 over real stdio: oversized or malformed messages get a JSON-RPC error (-32700, -32600,
// -32602 with one clear line), never a silent exit or a hang, and the session keeps serving. The
// SDK's Client cannot send such bytes, so these tests write raw bytes to the built binary's stdin.
// Each test has a server of its own; they run at once.
import { readFile } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import { it, RawSession, waitFor, type E2E } from '../support/harness.js';

/** The stdio message limit the server documents (bytes of one line, without its newline). */
const LIMIT = 10 * 1024 * 1024;

type Message = Record<string, unknown>;

/** Every JSON message the server wrote so far. */
function messages(session: RawSession): Message[] {
  return lines(session).filter((line): line is Message => !Array.isArray(line));
}

/** Every line the server wrote, parsed (a batch's answer is an array). */
function lines(session: RawSession): unknown[] {
  return session.stdoutLines.map((line) => JSON.parse(line) as unknown);
}

/** Waits for the first error response that carries `id` (null included). */
async function errorFor(session: RawSession, id: string | number | null): Promise<Message> {
  return waitFor(
    () => messages(session).find((message) => message['id'] === id && 'error' in message),
    `an error response with id ${JSON.stringify(id)}`,
  );
}

/** Writes raw bytes and resolves once the pipe has taken them (large writes need draining). */
function write(session: RawSession, bytes: string | Buffer): Promise<void> {
  const stdin = session.child.stdin;
  if (stdin === null) throw new Error('no stdin');
  return new Promise((resolve, reject) =>
    stdin.write(bytes, (error) => (error ? reject(error) : resolve())),
  );
}

/** The session still answers: tools/list with a fresh id returns the tools. */
async function expectAlive(session: RawSession, id: number): Promise<void> {
  const reply = await session.request(id, 'tools/list');
  expect(reply['result']).toMatchObject({ tools: expect.any(Array) });
  expect(session.child.exitCode).toBeNull();
}

async function started(e2e: E2E): Promise<RawSession> {
  const session = new RawSession(e2e, await e2e.scope(), []);
  await session.initialize();
  return session;
}

/** A tools/call whose JSON is `size` bytes or more, serialised like the SDK's Client (id last). */
function hugeCall(id: number, size: number): string {
  const request = {
    method: 'tools/call',
    params: { name: 'sandboxed_shell', arguments: { command: `#${'x'.repeat(size)}` } },
    jsonrpc: '2.0',
    id,
  };
  return JSON.stringify(request);
}

/** Peak and current resident memory of a process, in bytes (Linux /proc). */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 };
}

describe.concurrent('oversized messages (SPEC §6)', { timeout: 60_000 }, () => {
  it('SPEC §6: a tools/call over the 10 MiB limit gets -32600 with its id, and the session goes on', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    await write(session, `${hugeCall(41, LIMIT)}\n`);
    const reply = await errorFor(session, 41);
    expect(reply['error']).toMatchObject({ code: -32600 });
    const message = (reply['error'] as { message: string }).message;
    expect(message).toMatch(/exceeds the limit of 10485760 bytes/);
    expect(message).not.toMatch(/\n/);
    await expectAlive(session, 42);
  });

  it('SPEC §6: the id is also recovered when it comes first (jsonrpc, id, method, params order)', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    const line = JSON.stringify({
      jsonrpc: '2.0',
      id: 'first',
      method: 'tools/call',
      params: { name: 'sandboxed_shell', arguments: { command: 'y'.repeat(LIMIT) } },
    });
    await write(session, `${line}\n`);
    expect((await errorFor(session, 'first'))['error']).toMatchObject({ code: -32600 });
    await expectAlive(session, 2);
  });

  it('SPEC §6: an oversized line of garbage gets -32600 with id null; memory stays bounded while it streams', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    const pid = session.child.pid ?? 0;
    const before = await memory(pid);
    // 256 MiB without a newline, in 1 MiB writes: a server that buffered it would grow by 256 MiB
    // or more; discarding it costs the 10 MiB limit plus chunks the GC has not reclaimed yet
    // (about 45 MiB measured).
    const piece = Buffer.alloc(1024 * 1024, 0x61);
    for (let i = 0; i < 256; i += 1) await write(session, piece);
    await write(session, '\n');
    expect((await errorFor(session, null))['error']).toMatchObject({
      code: -32600,
      message: `Invalid Request: message of ${String(256 * 1024 * 1024)} bytes exceeds the limit of 10485760 bytes; it was discarded`,
    });
    const after = await memory(pid);
    expect(after.peak - before.rss).toBeLessThan(128 * 1024 * 1024);
    await expectAlive(session, 3);
  });

  it('SPEC §6: a message of exactly the limit is served normally', async ({ e2e }) => {
    const session = await started(e2e);
    const request = {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'status', arguments: { ids: ['none'] } },
    };
    const base = JSON.stringify(request).length;
    // Padding inside _meta keeps the request valid; the line is LIMIT bytes exactly.
    const padded = {
      ...request,
      params: { ...request.params, _meta: { pad: '' } },
    };
    const overhead = JSON.stringify(padded).length - base;
    padded.params._meta.pad = 'p'.repeat(LIMIT - base - overhead);
    const line = JSON.stringify(padded);
    expect(Buffer.byteLength(line)).toBe(LIMIT);
    await write(session, `${line}\n`);
    const reply = await waitFor(
      () => messages(session).find((message) => message['id'] === 5),
      'the response to the padded call',
    );
    expect(reply['result']).toMatchObject({ content: expect.any(Array) });
    await expectAlive(session, 6);
  });
});

describe.concurrent('malformed messages (SPEC §6)', { timeout: 60_000 }, () => {
  it('SPEC §6: malformed JSON gets -32700 Parse error with id null, and the session goes on', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    await write(session, '{"jsonrpc":"2.0","id":9,"method":"tools/list"\n');
    const reply = await errorFor(session, null);
    expect(reply['error']).toMatchObject({
      code: -32700,
      message: expect.stringMatching(/^Parse error/),
    });
    await expectAlive(session, 10);
  });

  it('SPEC §6: a bad line between good ones in one write: each is answered, in order of the lines', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    const list = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' });
    await write(session, `${list(20)}\n{not json\r\n${list(21)}\n`);
    await errorFor(session, null);
    await waitFor(() => messages(session).find((m) => m['id'] === 21), 'the response to 21');
    expect(messages(session).find((m) => m['id'] === 20)).toHaveProperty('result');
  });

  it('SPEC §6: valid JSON that is not a JSON-RPC message gets -32600 (with its id when it has one)', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    await write(session, '{"jsonrpc":"2.0","id":7,"method":5}\n');
    expect((await errorFor(session, 7))['error']).toMatchObject({
      code: -32600,
      message: expect.stringContaining('"method" must be a string'),
    });
    await write(session, '"text"\n');
    expect((await errorFor(session, null))['error']).toMatchObject({ code: -32600 });
    await write(session, '{"jsonrpc":"1.0","id":8,"method":"tools/list"}\n');
    expect((await errorFor(session, 8))['error']).toMatchObject({ code: -32600 });
    await expectAlive(session, 11);
  });
});

describe.concurrent('JSON-RPC batches (SPEC §6, 2025-03-26)', { timeout: 60_000 }, () => {
  it('SPEC §6: a batch gets one array answering each of its requests; a batch of notifications gets nothing', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    await write(
      session,
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 'b1', method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        {
          jsonrpc: '2.0',
          id: 'b2',
          method: 'tools/call',
          params: { name: 'sandboxed_shell', arguments: { command: 'echo batched' } },
        },
        { jsonrpc: '2.0', id: 'b3', method: 'tools/call', params: { name: 5 } },
        7,
      ])}\n`,
    );
    const answer = await waitFor(
      () => lines(session).find((line): line is Message[] => Array.isArray(line)),
      'the answer to the batch',
    );
    const byId = new Map(answer.map((response) => [response['id'], response]));
    expect([...byId.keys()].sort()).toEqual(['b1', 'b2', 'b3', null].sort());
    expect(byId.get('b1')).toMatchObject({ result: { tools: expect.any(Array) } });
    expect(byId.get('b2')).toMatchObject({ result: { content: expect.any(Array) } });
    expect(byId.get('b3')).toMatchObject({ error: { code: -32602 } });
    expect(byId.get(null)).toMatchObject({ error: { code: -32600 } });

    const before = session.stdoutLines.length;
    await write(
      session,
      `${JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/initialized' }])}\n[]\n`,
    );
    expect((await errorFor(session, null))['error']).toMatchObject({
      code: -32600,
      message: 'Invalid Request: an empty batch',
    });
    await expectAlive(session, 30);
    // The notification-only batch wrote nothing: only the empty batch's error and tools/list.
    expect(session.stdoutLines.slice(before).map((line) => JSON.parse(line) as Message)).toEqual([
      expect.objectContaining({ id: null }),
      expect.objectContaining({ id: 30 }),
    ]);
  });
});

describe.concurrent(
  'JSON-RPC batches and completion pushes (R2.2, SPEC §6)',
  { timeout: 60_000 },
  () => {
    it('R2.2, SPEC §6: a completion push of an operation started in a batch arrives after the batch answer that names its id', async ({
      e2e,
    }) => {
      // The first element answers `started` at once and finishes long before the second (synchronous)
      // one, so the batch answer is held while the first completion is ready to be pushed.
      const session = new RawSession(e2e, await e2e.scope(), ['--inline-wait', '0']);
      await session.initialize();
      await write(
        session,
        `${JSON.stringify([
          {
            jsonrpc: '2.0',
            id: 'quick',
            method: 'tools/call',
            params: { name: 'sandboxed_shell', arguments: { command: 'sleep 1; echo A' } },
          },
          {
            jsonrpc: '2.0',
            id: 'slow',
            method: 'tools/call',
            params: {
              name: 'sandboxed_shell',
              arguments: { command: 'sleep 4', execution_mode: 'Synchronous' },
            },
          },
        ])}\n`,
      );
      const isPush = (line: unknown): line is Message =>
        !Array.isArray(line) &&
        typeof line === 'object' &&
        line !== null &&
        (line as Message)['method'] === 'notifications/message';
      await waitFor(() => lines(session).some(isPush), 'the completion push', 20_000);
      const all = lines(session);
      const answerAt = all.findIndex((line) => Array.isArray(line));
      expect(answerAt, 'the batch answer came before the push').not.toBe(-1);
      const answer = all[answerAt] as Message[];
      const quick = answer.find((response) => response['id'] === 'quick');
      const id = (
        quick?.['result'] as { structuredContent: { operation_id: string; status: string } }
      ).structuredContent;
      expect(id.status).toBe('started');
      const pushAt = all.findIndex(
        (line) =>
          isPush(line) &&
          (line['params'] as { data: { operation_id?: string } }).data.operation_id ===
            id.operation_id,
      );
      expect(pushAt).toBeGreaterThan(answerAt);
      expect((all[pushAt] as Message)['params']).toMatchObject({
        level: 'info',
        logger: 'ahma',
        data: { status: 'completed', output: 'A\n' },
      });
      // Once the batch is answered, pushes go out at once again.
      const single = await session.request(3, 'tools/call', {
        name: 'sandboxed_shell',
        arguments: { command: 'sleep 0.5; echo B' },
      });
      const next = (single['result'] as { structuredContent: { operation_id: string } })
        .structuredContent.operation_id;
      await waitFor(
        () =>
          lines(session).some(
            (line) =>
              isPush(line) &&
              (line['params'] as { data: { operation_id?: string } }).data.operation_id === next,
          ),
        'the push of a call outside any batch',
      );
    });

    it('SPEC §6: initialize inside a batch gets -32600 and the rest of the batch is served', async ({
      e2e,
    }) => {
      const session = await started(e2e);
      await write(
        session,
        `${JSON.stringify([
          {
            jsonrpc: '2.0',
            id: 'init',
            method: 'initialize',
            params: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              clientInfo: { name: 'x', version: '1' },
            },
          },
          { jsonrpc: '2.0', id: 'list', method: 'tools/list' },
        ])}\n`,
      );
      const answer = await waitFor(
        () => lines(session).find((line): line is Message[] => Array.isArray(line)),
        'the answer to the batch',
      );
      const byId = new Map(answer.map((response) => [response['id'], response]));
      expect(byId.get('init')).toEqual({
        jsonrpc: '2.0',
        id: 'init',
        error: {
          code: -32600,
          message: 'Invalid Request: initialize must not be part of a JSON-RPC batch',
        },
      });
      expect(byId.get('list')).toMatchObject({ result: { tools: expect.any(Array) } });
      await expectAlive(session, 4);
    });
  },
);

describe.concurrent('error messages (SPEC §6)', { timeout: 60_000 }, () => {
  it('SPEC §6: an unknown tool is -32602 whose message carries no "MCP error -32602:" prefix on the wire', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    await write(
      session,
      `${JSON.stringify({ jsonrpc: '2.0', id: 12, method: 'tools/call', params: { name: 'nope' } })}\n`,
    );
    expect((await errorFor(session, 12))['error']).toEqual({
      code: -32602,
      message: 'unknown tool "nope"',
    });
  });

  it('SPEC §6: the SDK Client shows the error code prefix once', async ({ e2e }) => {
    const server = await e2e.server(await e2e.scope());
    const error = await server.call('no_such_tool').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('MCP error -32602: unknown tool "no_such_tool"');
  });
});

describe.concurrent('invalid protocol params (SPEC §6)', { timeout: 60_000 }, () => {
  /** Sends a request and returns its error, which must be one line. */
  async function refused(session: RawSession, id: number, method: string, params: unknown) {
    await write(session, `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const error = (await errorFor(session, id))['error'] as { code: number; message: string };
    expect(error.message).not.toMatch(/\n/);
    return error;
  }

  it('SPEC §6: tools/call with wrong-typed arguments or name gets -32602 naming the field', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    expect(await refused(session, 1, 'tools/call', { name: 'status', arguments: 'oops' })).toEqual({
      code: -32602,
      message: 'tools/call: "arguments" must be an object',
    });
    expect(await refused(session, 2, 'tools/call', { name: 5 })).toEqual({
      code: -32602,
      message: 'tools/call: "name" must be a string',
    });
    expect(await refused(session, 3, 'tools/call', { arguments: {} })).toEqual({
      code: -32602,
      message: 'tools/call: "name" is required',
    });
    expect(await refused(session, 4, 'tools/call', { name: 'status', arguments: [1] })).toEqual({
      code: -32602,
      message: 'tools/call: "arguments" must be an object',
    });
    await expectAlive(session, 5);
  });

  it('SPEC §6: initialize and tools/list with wrong-typed params get -32602 naming the field', async ({
    e2e,
  }) => {
    const session = await started(e2e);
    expect(await refused(session, 1, 'tools/list', { cursor: 5 })).toEqual({
      code: -32602,
      message: 'tools/list: "cursor" must be a string',
    });
    expect(
      await refused(session, 2, 'initialize', {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'x' },
      }),
    ).toEqual({ code: -32602, message: 'initialize: "clientInfo.version" is required' });
    await expectAlive(session, 3);
  });
});
