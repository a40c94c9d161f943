// R8D.3: how a spare process reads its scope (isolation/spare-scope.ts) — the first line of its
// stdin, and nothing of what follows it taken from the MCP transport that reads next.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readScopeLine, scopeLine } from '../../src/isolation/spare-scope.js';

/** What a transport that starts listening after the scope was read receives. */
function rest(input: PassThrough): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    input.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    input.once('end', () => resolve(text));
  });
}

describe('the scope line of a spare process', () => {
  it('R8D.3: the first line gives the scope; what follows it in the same chunk reaches the next reader whole', async () => {
    const input = new PassThrough();
    const read = readScopeLine(input);
    input.write(`${scopeLine('/var/tmp/a project')}\n{"jsonrpc":"2.0","id":1,`);
    expect(await read).toBe('/var/tmp/a project');
    const after = rest(input);
    input.end('"method":"initialize"}\n');
    expect(await after).toBe('{"jsonrpc":"2.0","id":1,"method":"initialize"}\n');
  });

  it('R8D.3: a line split over chunks is read whole', async () => {
    const input = new PassThrough();
    const read = readScopeLine(input);
    const line = `${scopeLine('/srv/x')}\n`;
    for (const piece of [line.slice(0, 3), line.slice(3, 9), line.slice(9)]) input.write(piece);
    expect(await read).toBe('/srv/x');
  });

  it('R8D.10: stdin ending before a line (the server stopped the spare) is no scope', async () => {
    const input = new PassThrough();
    const read = readScopeLine(input);
    input.end(scopeLine('/no/newline'));
    expect(await read).toBeUndefined();
  });

  it('R8D.3: a line that is not a scope (an MCP message, an empty scope, a huge line) is refused', async () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":1,"method":"initialize"}\n',
      '{"scope":""}\n',
      'not json\n',
      `${'x'.repeat(70 * 1024)}\n`,
    ]) {
      const input = new PassThrough();
      const read = readScopeLine(input);
      input.write(text);
      await expect(read).rejects.toThrow(/scope line/);
    }
  });
});
