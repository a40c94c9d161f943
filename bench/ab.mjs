#!/usr/bin/env node
// A/B: this checkout's ahma-shell against another built checkout's, side by side in one run, so a
// change is measured against the same noise (machines here vary by ±50% within minutes).
//
//   pnpm build && node bench/ab.mjs OTHER_CHECKOUT [--n 400] [--burst 3000] [--rounds 3]
//
// OTHER_CHECKOUT: e.g. `git worktree add /tmp/before REV && (cd /tmp/before && pnpm install &&
// pnpm build)`. Both servers run `ahma-shell --sync` and get `sandboxed_shell {"command":"echo
// hi"}`: --n sequential calls, round-robin in chunks of 10; then, per round and server, calls/s
// with 8 in flight (after an untimed quarter-burst warm-up) and the machine's busy CPU time per
// call during that burst (from /proc/stat: every process, the kernel's work included).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { summarize } from './stats.mjs';
import { numberOption } from './args.mjs';

const args = process.argv.slice(2);
const other = args[0];
if (other === undefined || other.startsWith('--')) {
  process.stderr.write(
    'usage: node bench/ab.mjs OTHER_CHECKOUT [--n 400] [--burst 3000] [--rounds 3]\n',
  );
  process.exit(2);
}
const N = numberOption('n', 400);
const BURST = numberOption('burst', 3000);
const ROUNDS = numberOption('rounds', 3);
const INFLIGHT = 8;

const root = mkdtempSync('/var/tmp/ahma-ab-');
const scope = join(root, 'scope');
mkdirSync(scope);
const builds = {
  [resolve(other)]: resolve(other),
  this: join(dirname(fileURLToPath(import.meta.url)), '..'),
};
const clients = {};
for (const [name, dir] of Object.entries(builds)) {
  const client = new Client({ name: 'ahma-ab', version: '1' });
  const bin = join(dir, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--mode', 'stdio', '--sync', '--sandbox-scope', scope],
      cwd: scope,
      env: { ...process.env, XDG_CACHE_HOME: join(root, `cache-${Object.keys(clients).length}`) },
      stderr: 'ignore',
    }),
  );
  clients[name] = client;
}

async function call(client) {
  const result = await client.callTool({
    name: 'sandboxed_shell',
    arguments: { command: 'echo hi' },
  });
  if (result.isError) throw new Error(`unexpected result: ${JSON.stringify(result)}`);
}
/** Busy CPU time of the whole machine so far, ms (user, nice, system, irq, softirq). */
function busyMs() {
  const [, user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .split(/\s+/)
    .map(Number);
  return (user + nice + system + irq + softirq) * 10;
}
async function burst(client, count) {
  let next = 0;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next++ < count) await call(client);
    }),
  );
}

const latency = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
const rate = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
const cpu = Object.fromEntries(Object.keys(clients).map((name) => [name, []]));
for (const client of Object.values(clients)) for (let i = 0; i < 50; i++) await call(client);
for (let done = 0; done < N; done += 10) {
  for (const [name, client] of Object.entries(clients)) {
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await call(client);
      latency[name].push(performance.now() - started);
    }
  }
}
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, client] of Object.entries(clients)) {
    await burst(client, Math.ceil(BURST / 4));
    const busy = busyMs();
    const started = performance.now();
    await burst(client, BURST);
    rate[name].push(Math.round(BURST / ((performance.now() - started) / 1000)));
    cpu[name].push(Math.round(((busyMs() - busy) / BURST) * 1000) / 1000);
  }
}
for (const client of Object.values(clients)) await client.close();
rmSync(root, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const lines = [
  `# A/B — node ${process.version}, ${N} sequential calls each, ${ROUNDS} rounds of ${BURST} with ${INFLIGHT} in flight`,
  '',
  '| build | p50 ms | p90 ms | calls/s (rounds) | median calls/s | CPU ms per call (rounds) | median CPU ms |',
  '| --- | ---: | ---: | --- | ---: | --- | ---: |',
  ...Object.keys(clients).map((name) => {
    const s = summarize(latency[name]);
    return `| ${name} | ${s.p50} | ${s.p90} | ${rate[name].join(', ')} | ${median(rate[name])} | ${cpu[name].join(', ')} | ${median(cpu[name])} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
