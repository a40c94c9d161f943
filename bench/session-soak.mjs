#!/usr/bin/env node
// Session soak (issue 32): does an HTTP server give back the memory of sessions that ended?
//
//   pnpm build && node bench/session-soak.mjs [--sessions 20] [--calls 500] [--settle 60]
//                                             [--command 'echo hi'] [--rounds 1]
//                                             [--client sdk|json|legacy]
//
// One `ahma-shell --mode http --http-port 0 --http-no-auth --inline-wait 0` run under
// `node --expose-gc --import bench/soak-gc-hook.mjs` (a TEST-ONLY preload: on SIGUSR2 it forces
// two full GCs and prints process.memoryUsage() on stderr; see that file). Its memory is read at:
//
//   start   the fresh server, after a forced GC;
//   idle    after one warm-up session (20 calls) was opened, used and ended, after a forced GC:
//           the idle server every later point is compared with;
//   during  when half the calls have been answered, after a forced GC;
//   peak    the highest VmRSS sampled every 200 ms while the sessions run (no GC forced);
//   loaded  after the load, every session still open, after a forced GC;
//   ended   every session ended (DELETE), at once, after a forced GC;
//   settled then, once VmRSS has stopped falling (steady for 5 s, at most --settle seconds),
//           after a forced GC: V8 gives back the young generation it grew under load only when
//           its memory reducer sees the load gone, seconds later, whatever GC is forced before.
//
// The load: --sessions Streamable HTTP sessions (the SDK's Client) at once, each making --calls
// asynchronous `sandboxed_shell {"command": …}` calls one after another: the call answers `started`
// (inline wait 0), then `await {"ids": [id]}` answers the result (its completion is also pushed on
// the session's GET stream). --client json makes them raw clients instead, that POST with
// `Accept: application/json` and open no GET stream (every push is kept in the session's event
// store); --client legacy the SDK's HTTP+SSE client on /sse (a session ends with its stream).
// --rounds repeats load and end on the same server. Target (issue 32): RSS `settled` within 1.2×
// of `idle`. With AHMA_SOAK_SMAPS=1 each probe also prints the server's VmRSS by kind of mapping
// on stderr (/proc/PID/smaps: `[heap]` is malloc's main arena, `files` the mapped binaries).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { numberOption, option } from './args.mjs';

const SESSIONS = numberOption('sessions', 20);
const CALLS = numberOption('calls', 500);
const SETTLE_SECONDS = numberOption('settle', 60);
const SETTLED_WINDOW_MS = 5000;
const ROUNDS = numberOption('rounds', 1);
const COMMAND = option('command', 'echo hi');
const CLIENT = option('client', 'sdk');
const WARMUP_CALLS = 20;
const SAMPLE_EVERY_MS = 200;

const here = dirname(fileURLToPath(import.meta.url));
const ahmaBin = join(here, '..', 'packages', 'shell-server', 'bin', 'ahma-shell.js');
const hook = join(here, 'soak-gc-hook.mjs');
const root = mkdtempSync('/var/tmp/ahma-soak-');
const scope = join(root, 'scope');

const MiB = 1024 * 1024;
const mib = (bytes) => (bytes / MiB).toFixed(1);
const opt = (bytes) => (bytes === undefined ? '—' : mib(bytes));

// ── The server ────────────────────────────────────────────────────────────────────────────────────

mkdirSync(scope);
const child = spawn(
  process.execPath,
  [
    '--expose-gc',
    '--import',
    hook,
    ahmaBin,
    '--mode',
    'http',
    '--http-port',
    '0',
    '--http-no-auth',
    '--inline-wait',
    '0',
    '--sandbox-scope',
    scope,
  ],
  {
    cwd: scope,
    env: {
      ...process.env,
      XDG_CACHE_HOME: join(root, 'cache'),
      XDG_STATE_HOME: join(root, 'state'),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
process.on('exit', () => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});
let stderr = '';
const probes = [];
let waiting;
child.stderr.setEncoding('utf8');
child.stderr.on('data', (text) => {
  stderr += text;
  for (const match of text.matchAll(/^ahma-soak-memory: (\{.*\})$/gm)) {
    probes.push(JSON.parse(match[1]));
    waiting?.();
  }
  if (stderr.length > 1 << 20) stderr = stderr.slice(-65536);
});
const url = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`no URL in 30 s:\n${stderr}`)), 30_000);
  const look = () => {
    const found = /ahma-shell: listening on (http:\/\/\S+\/mcp)/.exec(stderr);
    if (found !== null) {
      clearTimeout(timer);
      child.stderr.off('data', look);
      resolve(found[1]);
    }
  };
  child.stderr.on('data', look);
  child.once('exit', (code) => reject(new Error(`the server exited (${code}):\n${stderr}`)));
});

/** VmRSS of the server's node process, bytes (no GC forced). */
function vmRss() {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)[1]) * 1024;
}

/** VmRSS of the server by kind of mapping (/proc/PID/smaps): [heap] is malloc's main arena. */
function rssByMapping() {
  const totals = {};
  let kind = 'other';
  for (const line of readFileSync(`/proc/${child.pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header !== null) {
      const name = header[1];
      kind = name === '' ? 'anonymous' : name.startsWith('[') ? name : 'files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) totals[kind] = (totals[kind] ?? 0) + Number(rss[1]) * 1024;
  }
  return totals;
}

/** Forces GC in the server (the hook) and resolves with process.memoryUsage() after it. */
async function probe() {
  const before = probes.length;
  const arrived = new Promise((resolve) => (waiting = resolve));
  child.kill('SIGUSR2');
  const timer = setTimeout(() => waiting?.(), 30_000);
  while (probes.length === before) await arrived;
  clearTimeout(timer);
  waiting = undefined;
  if (process.env['AHMA_SOAK_SMAPS']) {
    const byMapping = Object.entries(rssByMapping()).map(([k, v]) => `${k} ${mib(v)}`);
    process.stderr.write(
      `VmRSS by mapping after probe ${probes.length}: ${byMapping.join(', ')}\n`,
    );
  }
  return probes.at(-1);
}

// ── The clients ───────────────────────────────────────────────────────────────────────────────────

/** --client json: a raw client that POSTs with `Accept: application/json` and opens no GET stream. */
async function openJsonSession() {
  let sessionId;
  let next = 0;
  const post = async (message) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2025-06-18',
        ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
      },
      body: JSON.stringify(message),
    });
    sessionId ??= response.headers.get('mcp-session-id') ?? undefined;
    const text = await response.text();
    if (!response.ok) throw new Error(`${response.status}: ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  };
  const request = async (method, params) => {
    const answer = await post({ jsonrpc: '2.0', id: ++next, method, params });
    if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
    return answer.result;
  };
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'session-soak', version: '1.0.0' },
  });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return {
    client: { callTool: (params) => request('tools/call', params) },
    async end() {
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } });
    },
    pushes: () => 0,
  };
}

async function openSession() {
  if (CLIENT === 'json') return openJsonSession();
  const transport =
    CLIENT === 'legacy'
      ? new SSEClientTransport(new URL(url.replace(/\/mcp$/, '/sse')))
      : new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'session-soak', version: '1.0.0' });
  let pushes = 0;
  client.fallbackNotificationHandler = async (notification) => {
    if (notification.method === 'notifications/message') pushes++;
  };
  await client.connect(transport);
  return { client, transport, pushes: () => pushes };
}

async function endSession(session) {
  if (session.end !== undefined) return session.end();
  // A legacy session ends with its GET stream (client.close() below).
  if (CLIENT !== 'legacy') await session.transport.terminateSession();
  await session.client.close();
}

/** One asynchronous call answered `started`, then `await` of it; throws on anything else. */
async function callAndAwait(client, n) {
  const started = await client.callTool({
    name: 'sandboxed_shell',
    arguments: { command: COMMAND },
  });
  const id = started.structuredContent?.operation_id;
  if (typeof id !== 'string') throw new Error(`no operation id: ${JSON.stringify(started)}`);
  const awaited = await client.callTool({ name: 'await', arguments: { ids: [id] } });
  const [operation] = awaited.structuredContent?.operations ?? [];
  if (operation?.status !== 'completed') {
    throw new Error(`call ${n}: ${id} did not complete: ${JSON.stringify(awaited)}`);
  }
  return started.structuredContent.status;
}

/** Makes `calls` calls; `each` is told after every one. */
async function runSession(session, calls, each = () => undefined) {
  let answeredStarted = 0;
  for (let n = 0; n < calls; n++) {
    if ((await callAndAwait(session.client, n)) === 'started') answeredStarted++;
    await each();
  }
  return answeredStarted;
}

/**
 * Waits (sampling VmRSS, forcing nothing) until the server's RSS has not fallen by more than 1 MiB
 * for SETTLED_WINDOW_MS, at most --settle seconds; resolves with the seconds waited. V8 gives back
 * the young generation it grew under load only once it sees the allocation rate fall (its memory
 * reducer, several seconds after the load), whatever GC is forced meanwhile.
 */
async function settle() {
  const t0 = performance.now();
  const samples = [];
  for (;;) {
    const now = performance.now();
    samples.push({ at: now, rss: vmRss() });
    const window = samples.filter((sample) => sample.at >= now - SETTLED_WINDOW_MS);
    const spanned = now - samples[0].at >= SETTLED_WINDOW_MS;
    if (spanned && window[0].rss - Math.min(...window.map((sample) => sample.rss)) < MiB) break;
    if (now - t0 >= SETTLE_SECONDS * 1000) break;
    await sleep(SAMPLE_EVERY_MS);
  }
  return (performance.now() - t0) / 1000;
}

// ── The soak ──────────────────────────────────────────────────────────────────────────────────────

const rows = [];
const row = (point, usage, note = '') =>
  rows.push({
    point,
    rss: usage.rss,
    heap: usage.heapUsed,
    heapTotal: usage.heapTotal,
    newSpace: usage.spaces?.new_space,
    external: usage.external,
    note,
  });

row('start', await probe(), 'fresh server, GC forced');
const warm = await openSession();
await runSession(warm, WARMUP_CALLS);
await endSession(warm);
const idle = await probe();
row('idle', idle, `after a warm-up session of ${WARMUP_CALLS} calls ended, GC forced`);

for (let round = 1; round <= ROUNDS; round++) {
  const suffix = ROUNDS > 1 ? ` (round ${round})` : '';
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, vmRss())), SAMPLE_EVERY_MS);
  const t0 = performance.now();
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => openSession()));
  const total = SESSIONS * CALLS;
  let answeredCalls = 0;
  let during;
  // Half-way, every client waits for the probe (so the GC it forces is the only thing running).
  const halfWay = async () => {
    if (++answeredCalls === Math.floor(total / 2)) {
      during = probe().then((usage) =>
        row(`during${suffix}`, usage, `${Math.floor(total / 2)} calls answered, GC forced`),
      );
    }
    if (during !== undefined) await during;
  };
  const started = await Promise.all(sessions.map((session) => runSession(session, CALLS, halfWay)));
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, vmRss());
  const answered = started.reduce((a, b) => a + b, 0);
  const pushes = sessions.reduce((a, s) => a + s.pushes(), 0);
  rows.push({ point: `peak${suffix}`, rss: peak, note: 'VmRSS sampled every 200 ms, no GC' });
  row(
    `loaded${suffix}`,
    await probe(),
    `${SESSIONS} sessions still open, ${total} calls in ${seconds.toFixed(1)} s ` +
      `(${answered} answered started, ${pushes} pushes), GC forced`,
  );
  await Promise.all(sessions.map(endSession));
  row(`ended${suffix}`, await probe(), 'every session ended (DELETE), at once, GC forced');
  const waited = await settle();
  row(
    `settled${suffix}`,
    await probe(),
    `VmRSS steady for ${SETTLED_WINDOW_MS / 1000} s, ${waited.toFixed(1)} s after the end, GC forced`,
  );
}

child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));

const ratio = (usage) => (usage / idle.rss).toFixed(2);
const lines = [
  `session soak: ${SESSIONS} sessions × ${CALLS} async calls (${JSON.stringify(COMMAND)}, ` +
    `--inline-wait 0, then await), node ${process.version}`,
  '',
  '| point | VmRSS MiB | RSS / idle | live heap MiB | V8 heap MiB | of it young gen. | external MiB | what |',
  '| ----- | --------: | ---------: | ------------: | ----------: | ---------------: | -----------: | ---- |',
  ...rows.map(
    (r) =>
      `| ${r.point} | ${mib(r.rss)} | ${ratio(r.rss)}× | ${opt(r.heap)} | ${opt(r.heapTotal)} | ` +
      `${opt(r.newSpace)} | ${opt(r.external)} | ${r.note} |`,
  ),
];
const settled = rows.filter((r) => r.point.startsWith('settled')).at(-1);
lines.push(
  '',
  `RSS after every session ended (settled): ${ratio(settled.rss)}× the idle server's ` +
    `(target ≤ 1.2×): ${settled.rss <= 1.2 * idle.rss ? 'met' : 'NOT met'}`,
);
process.stdout.write(`${lines.join('\n')}\n`);
