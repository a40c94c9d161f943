// SPEC §6: the stdio transport answers what it cannot deliver and keeps serving; here with the
// SDK's real Server on in-memory streams and a small limit (the e2e suite drives the binary).
import { PassThrough } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { describe, expect, it } from 'vitest';
import { paramsProblem } from '../../src/mcp/params.js';
import { StdioTransport } from '../../src/mcp/stdio-transport.js';

async function connected() {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  let rest = '';
  output.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts.map((line) => JSON.parse(line) as Record<string, unknown>));
  });
  const transport = new StdioTransport({
    input,
    output,
    maxMessageBytes: 1024,
    checkParams: paramsProblem,
  });
  const errors: Error[] = [];
  let closed = 0;
  transport.onclose = () => (closed += 1);
  const server = new Server({ name: 't', version: '1' }, { capabilities: {} });
  server.onerror = (error) => errors.push(error);
  await server.connect(transport);
  /** Waits until a message with this id was written. */
  const reply = async (id: unknown) => {
    for (let i = 0; i < 100; i += 1) {
      const found = lines.find((line) => line['id'] === id);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`no reply with id ${JSON.stringify(id)}`);
  };
  return { input, transport, errors, reply, closed: () => closed };
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
});
