// R7.16–R7.18: the engine's gate over a real proxy on 127.0.0.1. Each command's pass carries its
// own token in every proxy variable (and empties no_proxy); the token dies with the command; what
// the proxy refused a command comes back from end(), once per host and port; a person's grant
// lets the host through — `once` for the session's next command only, `session` for that session
// only, `always` for every session, kept in the ledger and loaded by the next gate.
import { request, createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EgressGate, grantRules, type EgressCaller } from '../../src/network/egress-gate.js';
import type { EgressDecision } from '../../src/network/egress-proxy.js';
import { GrantLedger } from '../../src/state/grant-ledger.js';

let service: Server;
let port = 0;
let stateRoot: string;
const gates: EgressGate[] = [];

beforeAll(async () => {
  service = createServer((_, response) => response.end('served'));
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const address = service.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  service.closeAllConnections();
  await new Promise<void>((resolve) => service.close(() => resolve()));
});

afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
  if (stateRoot !== undefined) await rm(stateRoot, { recursive: true, force: true });
});

async function gate(allow: readonly string[] = [], decisions: EgressDecision<EgressCaller>[] = []) {
  stateRoot = await mkdtemp(join(tmpdir(), 'ahma-gate-'));
  const started = await EgressGate.start({
    scope: '/work/project',
    allow,
    deny: [],
    ledger: new GrantLedger(stateRoot),
    onDecision: (decision) => decisions.push(decision),
  });
  gates.push(started);
  return started;
}

/** A plain HTTP GET of the service through the proxy URL: the status code. */
function get(proxyUrl: string): Promise<number> {
  const proxy = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request({
      host: proxy.hostname,
      port: proxy.port,
      path: `http://127.0.0.1:${String(port)}/`,
      headers: {
        'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`,
      },
    });
    outgoing.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const caller = (owner: string, operationId = 'op_1'): EgressCaller => ({
  tool: 'sandboxed_shell',
  operationId,
  owner,
});

describe('EgressGate', () => {
  it('R7.16: a pass sets every proxy variable to its own URL, empties no_proxy, and stops working when the command ends', async () => {
    const decisions: EgressDecision<EgressCaller>[] = [];
    const g = await gate([`127.0.0.1:${String(port)}`], decisions);
    const pass = g.open(caller('c1'));
    const url = pass.env['http_proxy'] ?? '';
    expect(url).toMatch(new RegExp(`^http://ahma:[0-9a-f]{48}@127\\.0\\.0\\.1:${String(g.port)}$`));
    for (const name of ['https_proxy', 'all_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
      expect(pass.env[name]).toBe(url);
    }
    expect(pass.env['no_proxy']).toBe('');
    expect(pass.env['NO_PROXY']).toBe('');
    expect(g.open(caller('c1')).env['http_proxy']).not.toBe(url);
    expect(await get(url)).toBe(200);
    expect(decisions.at(-1)).toMatchObject({
      allowed: true,
      principal: caller('c1'),
      rule: `127.0.0.1:${String(port)}`,
    });
    expect(pass.end()).toEqual([]);
    expect(await get(url)).toBe(407);
  });

  it('R7.17: what the proxy refused a command comes back from end(), once per host and port', async () => {
    const g = await gate();
    const pass = g.open(caller('c1'));
    const url = pass.env['http_proxy'] ?? '';
    expect(await get(url)).toBe(403);
    expect(await get(url)).toBe(403);
    const refusals = pass.end();
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ host: '127.0.0.1', port, refusal: 'unlisted' });
    expect(
      grantRules(refusals[0] ?? { host: '', port: 0, refusal: 'unlisted', reason: '' }),
    ).toEqual([`127.0.0.1:${String(port)}`]);
  });

  it('R7.18: a session grant lets that session through and no other; a once grant only its next command', async () => {
    const g = await gate();
    const first = g.open(caller('c1'));
    expect(await get(first.env['http_proxy'] ?? '')).toBe(403);
    const [refusal] = first.end();
    if (refusal === undefined) throw new Error('no refusal');
    await g.grant('c1', refusal, 'session', { who: 'test', why: 'test' });
    expect(await get(g.open(caller('c1')).env['http_proxy'] ?? '')).toBe(200);
    expect(await get(g.open(caller('c2')).env['http_proxy'] ?? '')).toBe(403);
    g.forget('c1');
    expect(await get(g.open(caller('c1')).env['http_proxy'] ?? '')).toBe(403);

    await g.grant('c3', refusal, 'once', { who: 'test', why: 'test' });
    const next = g.open(caller('c3'));
    expect(await get(next.env['http_proxy'] ?? '')).toBe(200);
    expect(await get(next.env['http_proxy'] ?? '')).toBe(200);
    expect(await get(g.open(caller('c3')).env['http_proxy'] ?? '')).toBe(403);
  });

  it('R7.18: an always grant reaches every session, is kept in the ledger, and the next gate loads it', async () => {
    const g = await gate();
    const pass = g.open(caller('c1'));
    await get(pass.env['http_proxy'] ?? '');
    const [refusal] = pass.end();
    if (refusal === undefined) throw new Error('no refusal');
    await g.grant('c1', refusal, 'always', { who: 'client 1', why: 'because' });
    expect(await get(g.open(caller('c2')).env['http_proxy'] ?? '')).toBe(200);
    const [kept] = await new GrantLedger(stateRoot).list();
    expect(kept).toMatchObject({
      kind: 'host',
      rule: `127.0.0.1:${String(port)}`,
      scope: '/work/project',
      who: 'client 1',
      why: 'because',
    });
    const next = await EgressGate.start({
      scope: '/work/project',
      allow: [],
      deny: [],
      ledger: new GrantLedger(stateRoot),
    });
    gates.push(next);
    expect(await get(next.open(caller('c9')).env['http_proxy'] ?? '')).toBe(200);
    const elsewhere = await EgressGate.start({
      scope: '/work/other',
      allow: [],
      deny: [],
      ledger: new GrantLedger(stateRoot),
    });
    gates.push(elsewhere);
    expect(await get(elsewhere.open(caller('c9')).env['http_proxy'] ?? '')).toBe(403);
  });

  it('R7.17: a malformed rule refuses the start', async () => {
    await expect(EgressGate.start({ scope: '/w', allow: ['*'], deny: [] })).rejects.toThrow(/\*/);
  });
});
