// R8.12: a stdio server that cannot start says why to its client. The built binary with a scope it
// refuses answers the SDK client's initialize with a JSON-RPC error naming the cause and the fix
// (and prints it on stderr), then exits 1; unit: every request gets the error, notifications and
// garbage none, and the wait ends.
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { RpcCode } from '../../../src/jsonrpc/codes.js';
import { refusal } from '../../../src/jsonrpc/refusal.js';
import { answerWithRefusal, oneLine } from '../../../src/transports/stdio/start-refusal.js';
import { BIN, childEnv } from '../../support/harness.js';

describe('a stdio server that cannot start', () => {
  it('R8.12: answers the SDK client’s initialize with the cause and the fix, prints it on stderr, and exits 1', async () => {
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--mode', 'stdio', '--sandbox-scope', '/'],
      env: childEnv(),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'refusal-test', version: '1.0.0' });
    const exited = new Promise<number | null>((resolve) => {
      transport.onclose = () => resolve(null);
    });
    await expect(client.connect(transport)).rejects.toThrow(
      /ahma-shell cannot start: the sandbox scope cannot be the filesystem root/,
    );
    expect(stderr).toContain('ahma-shell: the sandbox scope cannot be the filesystem root');
    await client.close();
    await exited;
  });

  it('R8.12: every request gets the one-line refusal with its code; notifications and garbage get nothing', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let written = '';
    output.on('data', (chunk: Buffer) => (written += chunk.toString('utf8')));
    const done = answerWithRefusal(
      refusal('start', 'no Landlock here.\nTo fix: use Linux 5.13.', {
        code: 'SANDBOX_UNAVAILABLE',
      }),
      input,
      output,
    );
    input.write('not json\n');
    input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n');
    input.write('{"jsonrpc":"2.0","id":"b","method":"tools/list"}\n');
    input.end();
    await done;
    const answers = written
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            id: unknown;
            error: { code: number; message: string; data: { code: string } };
          },
      );
    expect(answers.map((answer) => answer.id)).toEqual([1, 'b']);
    expect(answers[0]?.error).toMatchObject({
      code: RpcCode.Refused,
      message: 'ahma-shell cannot start: no Landlock here. To fix: use Linux 5.13.',
      data: { code: 'SANDBOX_UNAVAILABLE' },
    });
  });

  it('R8.12: the message is one line, bounded', () => {
    expect(oneLine('a\n\n  b  \nc')).toBe('a b c');
    expect(oneLine('x'.repeat(5000))).toHaveLength(1000);
  });
});
