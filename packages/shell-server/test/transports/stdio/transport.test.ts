// SPEC §6: the stdio transport answers what it cannot deliver and keeps serving; here with the
// SDK's real Server on in-memory streams and a small limit (the e2e suite drives the binary).
import { PassThrough } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StdioTransport } from '../../../src/transports/stdio/transport.js';

async function connected() {
  const objects = () =>
    lines.filter((line): line is Record<string, unknown> => !Array.isArray(line));
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: unknown[] = [];
  let rest = '';
  output.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts.map((line) => JSON.parse(line) as unknown));
  });
  const transport = new StdioTransport({
    input,
    output,
    maxMessageBytes: 1024,
  });
  const errors: Error[] = [];
  let closed = 0;
  transport.onclose = () => (closed += 1);
  const server = new Server({ name: 't', version: '1' }, { capabilities: { tools: {} } });
  server.onerror = (error) => errors.push(error);
  // A slow handler (to hold a batch open) and one that fails the SDK's way, with an McpError.
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (request.params.name === 'slow') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { content: [{ type: 'text', text: 'slow done' }] };
    }
    throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"`);
  });
  await server.connect(transport);
  /** Waits until a message with this id was written. */
  const reply = async (id: unknown) => {
    for (let i = 0; i < 100; i += 1) {
      const found = objects().find((line) => line['id'] === id);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no reply with id ${JSON.stringify(id)}`);
  };
  /** Waits until the n-th line written (0-based) is there. */
  const line = async (index: number) => {
    for (let i = 0; i < 100; i += 1) {
      if (lines.length > index) return lines[index];
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no line ${String(index)}`);
  };
  return { input, transport, errors, reply, line, lines, closed: () => closed };
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\r\n`;

describe('StdioTransport', () => {
  it('SPEC §6: answers oversized, malformed and invalid lines, skips blank ones, and serves the rest', async () => {
    const session = await connected();
    const huge = JSON.stringify({
      method: 'ping',
      params: { pad: 'x'.repeat(2000) },
      jsonrpc: '2.0',
      id: 1,
    });
    session.input.write(`${huge}\n\n   \n{oops\n${ping(2)}`);
    expect(await session.reply(1)).toMatchObject({ error: { code: -32600 } });
    expect(await session.reply(null)).toMatchObject({ error: { code: -32700 } });
    expect(await session.reply(2)).toMatchObject({ result: {} });
    // The server logs what was refused (through onerror), one report per refused line.
    expect(session.errors.map((error) => error.message)).toEqual([
      expect.stringContaining('exceeds the limit of 1024 bytes'),
      expect.stringContaining('Parse error'),
    ]);
  });

  it('SPEC §6: a malformed last line without its newline is still answered when input ends, then the session closes once', async () => {
    const session = await connected();
    session.input.end('{"jsonrpc":"2.0","id":3,');
    expect(await session.reply(null)).toMatchObject({ error: { code: -32700 } });
    expect(session.closed()).toBe(1);
    await session.transport.close();
    expect(session.closed()).toBe(1);
  });

  it('SPEC §6 (2025-03-26 batches): a batch is answered with one array of its responses, once all are known', async () => {
    const session = await connected();
    const batch = [
      { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'slow' } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', id: 3, method: 'no/such/method' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5 } },
      'junk',
    ];
    session.input.write(`${JSON.stringify(batch)}\n`);
    const answer = (await session.line(0)) as Record<string, unknown>[];
    expect(Array.isArray(answer)).toBe(true);
    // Refused elements first (answered at once), then the server's responses as they came.
    expect(answer).toHaveLength(5);
    const byId = new Map(answer.map((response) => [response['id'], response]));
    expect(byId.get('slow')).toMatchObject({ result: { content: [{ text: 'slow done' }] } });
    expect(byId.get(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(byId.get(3)).toMatchObject({ error: { code: -32601 } });
    expect(byId.get(4)).toMatchObject({
      error: { code: -32602, message: 'tools/call: "name" must be a string' },
    });
    expect(byId.get(null)).toMatchObject({ error: { code: -32600 } });
    // Nothing else was written: one line for the whole batch.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(session.lines).toHaveLength(1);
  });

  it('SPEC §6 (2025-03-26 batches): notifications only → no output; an empty array → one -32600 error', async () => {
    const session = await connected();
    session.input.write(
      `${JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/initialized' }])}\n[]\n${ping(9)}`,
    );
    expect(await session.line(0)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: an empty batch' },
    });
    expect(await session.line(1)).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
    expect(session.lines).toHaveLength(2);
  });

  it('SPEC §6: a request the client cancels leaves its batch, which is answered without it', async () => {
    const session = await connected();
    session.input.write(
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'slow' } },
        { jsonrpc: '2.0', id: 1, method: 'ping' },
      ])}\n${JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'slow' },
      })}\n`,
    );
    expect(await session.line(0)).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.lines).toHaveLength(1);
  });

  it('SPEC §6: an McpError thrown by a handler goes on the wire without its "MCP error -32602: " prefix', async () => {
    const session = await connected();
    session.input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'nope' } })}\n`,
    );
    expect(await session.reply(5)).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32602, message: 'unknown tool "nope"' },
    });
  });
});
