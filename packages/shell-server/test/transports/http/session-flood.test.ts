// Red team, R8.4: another local process floods the built `ahma-shell --mode http` with initialize
// requests. It must not end a session that is in use (before, the 100th initialize ended the
// longest-idle session, whatever it was doing, and its client got 404), and with
// --session-isolation it must not make the server start more session processes than the cap (each
// is a Node of ~80 MB): the 17th session is refused with 503 naming the limit.
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { E2E } from '../../support/harness.js';
import { httpBinary, INITIALIZE, post, rawSession } from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const TOOLS_LIST = { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} };

interface Flood {
  readonly statuses: number[];
  /** The error message of the first 503, if any. */
  readonly refusal: string | undefined;
  readonly retryAfter: string | null;
}

/** `count` initialize POSTs to `url` from a process of its own, eight at a time. */
async function flood(url: string, count: number): Promise<Flood> {
  const script = `
    const [url, count, body] = process.argv.slice(1);
    const statuses = [];
    let refusal, retryAfter = null;
    const one = async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
      });
      statuses.push(response.status);
      const text = await response.text();
      if (response.status === 503 && refusal === undefined) {
        refusal = JSON.parse(text).error.message;
        retryAfter = response.headers.get('retry-after');
      }
    };
    let left = Number(count);
    const worker = async () => { while (left-- > 0) await one(); };
    await Promise.all(Array.from({ length: 8 }, worker));
    process.stdout.write(JSON.stringify({ statuses, refusal, retryAfter }));
  `;
  const child = e2e.track(
    spawn(
      process.execPath,
      ['--input-type=module', '-e', script, url, String(count), JSON.stringify(INITIALIZE)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`the flooding process failed (${String(code)}): ${stderr}`);
  return JSON.parse(stdout) as Flood;
}

const count = (statuses: readonly number[], status: number) =>
  statuses.filter((candidate) => candidate === status).length;

describe('red team: a local process floods the server with sessions', () => {
  it('R8.4: 100 initialize requests from another process do not end a session that made a request a moment ago; the one past the cap gets 503 naming it', async () => {
    const server = await httpBinary(e2e, await e2e.scope(), ['--http-no-auth', '--log-to-stderr']);
    const mine = await rawSession(server.url);
    expect((await post(server.url, TOOLS_LIST, { 'mcp-session-id': mine })).status).toBe(200);

    const result = await flood(server.url, 100);
    // 99 places were left beside mine; nothing was ended for the 100th.
    expect(count(result.statuses, 200)).toBe(99);
    expect(count(result.statuses, 503)).toBe(1);
    expect(result.refusal).toMatch(/limit of 100 \(--max-sessions\)/);
    expect(result.retryAfter).toBe('60');

    expect((await post(server.url, TOOLS_LIST, { 'mcp-session-id': mine })).status).toBe(200);
    expect(server.stderr()).toMatch(/session refused/);
  });

  it('R8D R8.4: with --session-isolation a flood gets 16 session processes, and the 17th session is refused with 503 naming --max-sessions', async () => {
    const server = await httpBinary(e2e, await e2e.scope(), [
      '--http-no-auth',
      '--session-isolation',
      '--log-to-stderr',
    ]);
    const result = await flood(server.url, 17);
    expect(count(result.statuses, 200)).toBe(16);
    expect(count(result.statuses, 503)).toBe(1);
    expect(result.refusal).toMatch(/limit of 16 \(--max-sessions\)/);
    expect(result.retryAfter).toBe('60');
    const refused = await post(server.url, INITIALIZE, { accept: 'application/json' });
    expect(refused.status).toBe(503);
    expect(server.stderr()).toMatch(/session refused: Too many open sessions/);
  }, 120_000);
});
