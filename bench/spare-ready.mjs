#!/usr/bin/env node
// An isolated session's start from a spare that is ready (issue 31, item 4): the process the HTTP
// server keeps started ahead (`ahma-shell --mode stdio --scope-from-stdin`, with the server's
// `--expose-gc`), given 1.5 s to load and prepare, then its scope line, initialize, initialized
// and tools/list over its stdio, as the session's process gets them: the time from the scope line
// to initialize's answer and to tools/list's. What a session started after a pause waits for on top
// of the HTTP exchange (bench/http.mjs --isolation starts sessions back to back instead, each
// taking a spare still loading).
//
//   pnpm build && node bench/spare-ready.mjs [--n 10] [--baseline OTHER_CHECKOUT]
//
// --baseline: another built checkout's spares too, alternating with this one's.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { numberOption, option } from './args.mjs';
import { summarize } from './stats.mjs';

const N = numberOption('n', 10);
const BASELINE = option('baseline', undefined);
const here = join(fileURLToPath(import.meta.url), '..', '..');
const checkouts = [here, ...(BASELINE === undefined ? [] : [resolve(BASELINE)])];

// Under /var/tmp: Ahma refuses to start when its code lies where commands can write.
const root = mkdtempSync('/var/tmp/ahma-spare-ready-');
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
mkdirSync(scope);

const samples = new Map(checkouts.map((checkout) => [checkout, { initialize: [], list: [] }]));
for (let i = 0; i < N; i++) {
  for (const checkout of checkouts) {
    const { initialize, list } = await sample(checkout);
    samples.get(checkout).initialize.push(initialize);
    samples.get(checkout).list.push(list);
  }
}
process.stdout.write(
  `# A ready spare given its scope: ${String(N)} each, node ${process.version}\n\n` +
    '| checkout | → initialize answered, p50 ms | → tools/list answered, p50 ms | p90 ms |\n' +
    '| --- | ---: | ---: | ---: |\n',
);
for (const [checkout, { initialize, list }] of samples) {
  const name = checkout === here ? 'this' : checkout;
  const listed = summarize(list);
  process.stdout.write(
    `| ${name} | ${String(summarize(initialize).p50)} | ${String(listed.p50)} | ${String(listed.p90)} |\n`,
  );
}

/** One spare of `checkout`: started, given time to get ready, then its scope and the handshake. */
async function sample(checkout) {
  const bin = join(checkout, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
  const child = spawn(
    process.execPath,
    ['--expose-gc', bin, '--mode', 'stdio', '--scope-from-stdin'],
    { cwd: '/', stdio: ['pipe', 'pipe', 'ignore'] },
  );
  await new Promise((done) => setTimeout(done, 1500));
  const answers = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    answers.get(message.id)?.(message);
  });
  const request = (id, method, params) =>
    new Promise((done) => {
      answers.set(id, done);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const started = performance.now();
  child.stdin.write(`${JSON.stringify({ scope })}\n`);
  await request(1, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'spare-ready', version: '1' },
  });
  const initialize = performance.now() - started;
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  await request(2, 'tools/list', {});
  const list = performance.now() - started;
  child.stdin.end();
  await new Promise((done) => child.once('exit', done));
  return { initialize, list };
}
