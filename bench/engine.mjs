#!/usr/bin/env node
// Engine benchmark: what it costs to run a command through Ahma's engine, per path.
//
//   pnpm build && node bench/engine.mjs [--n 300] [--big-mib 1024] [--json out.json]
//
// Paths, for `echo hi` and `/bin/true` (argv) and `echo hi` as a sandboxed_shell script:
//   pool    — a warm shell of the pool zygote (the default path)
//   direct  — a fresh spawn of the sandbox helper per command (--no-shell-pool, and pool misses)
//   plain   — child_process.spawn of the program itself: no sandbox, no supervision (the floor)
// Then the server-side process is grown to --big-mib of RSS (spawning from Node slows down as its
// memory grows; the pool should not) and the echo paths are measured again.
// Methods are sampled round-robin in chunks of 10 so they share the machine's noise: compare
// ratios within one run, never absolute times across runs.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarize } from './stats.mjs';
import { createEngine } from '@ahma/core';
import { option } from './args.mjs';

const N = Number(option('n', 300));
const BIG_MIB = Number(option('big-mib', 1024));
const JSON_OUT = option('json', undefined);
const CHUNK = 10;

const root = mkdtempSync('/var/tmp/ahma-bench-');
const scope = join(root, 'scope');
await import('node:fs/promises').then((fs) => fs.mkdir(scope));

const pooled = await createEngine({ scope, stateDir: join(root, 'pooled') });
const direct = await createEngine({ scope, noShellPool: true, stateDir: join(root, 'direct') });
let counter = 0;

function viaEngine(engine, command) {
  return async () => {
    const started = performance.now();
    const result = await engine.executor.run({ command, cwd: scope, logName: `b${counter++}` });
    const elapsed = performance.now() - started;
    if (result.status !== 'completed') throw new Error(`${result.status}: ${result.output}`);
    return elapsed;
  };
}

function plainSpawn(file, argv) {
  return () =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.resume();
      child.stderr.resume();
      child.once('error', reject);
      child.once('close', () => resolve(performance.now() - started));
    });
}

const echo = { kind: 'argv', argv: ['echo', 'hi'] };
const trueCommand = { kind: 'argv', argv: ['/bin/true'] };
const shellEcho = { kind: 'shell', script: 'echo hi' };

const methods = {
  'pool: echo hi': viaEngine(pooled, echo),
  'pool: /bin/true': viaEngine(pooled, trueCommand),
  'pool: shell "echo hi"': viaEngine(pooled, shellEcho),
  'direct (helper): echo hi': viaEngine(direct, echo),
  'direct (helper): /bin/true': viaEngine(direct, trueCommand),
  'direct (helper): shell "echo hi"': viaEngine(direct, shellEcho),
  'plain spawn: echo hi': plainSpawn('echo', ['hi']),
  'plain spawn: /bin/true': plainSpawn('/bin/true', []),
};

/** Round-robin: CHUNK samples of each method in turn until each has `n`. */
async function measure(selected, n) {
  const samples = Object.fromEntries(Object.keys(selected).map((name) => [name, []]));
  for (const run of Object.values(selected)) for (let i = 0; i < 5; i++) await run(); // warm-up
  for (let done = 0; done < n; done += CHUNK) {
    for (const [name, run] of Object.entries(selected)) {
      for (let i = 0; i < CHUNK && done + i < n; i++) samples[name].push(await run());
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, summarize(xs)]));
}

function rssMiB() {
  return Math.round(process.memoryUsage().rss / 1024 / 1024);
}

const atStart = await measure(methods, N);
const startRss = rssMiB();

// Grow this process to BIG_MIB of resident memory: touched pages, as a long-running server's heap.
const ballast = [];
for (let mib = 0; mib < BIG_MIB; mib += 64) ballast.push(Buffer.alloc(64 * 1024 * 1024, 1));
const bigRss = rssMiB();
const echoOnly = {
  'pool: echo hi': methods['pool: echo hi'],
  'direct (helper): echo hi': methods['direct (helper): echo hi'],
  'plain spawn: echo hi': methods['plain spawn: echo hi'],
};
const atBig = await measure(echoOnly, Math.max(30, Math.round(N / 3)));
ballast.length = 0;

await pooled.close();
await direct.close();
rmSync(root, { recursive: true, force: true });

const p50 = (table, name) => table[name].p50;
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
const ratios = {
  'direct / pool, echo hi (target ≥ 3)': ratio(
    p50(atStart, 'direct (helper): echo hi'),
    p50(atStart, 'pool: echo hi'),
  ),
  'direct / pool, /bin/true': ratio(
    p50(atStart, 'direct (helper): /bin/true'),
    p50(atStart, 'pool: /bin/true'),
  ),
  'direct / pool, shell "echo hi"': ratio(
    p50(atStart, 'direct (helper): shell "echo hi"'),
    p50(atStart, 'pool: shell "echo hi"'),
  ),
  'plain / pool, echo hi': ratio(
    p50(atStart, 'plain spawn: echo hi'),
    p50(atStart, 'pool: echo hi'),
  ),
  'helper overhead, echo hi: direct − plain (ms)':
    Math.round(
      (p50(atStart, 'direct (helper): echo hi') - p50(atStart, 'plain spawn: echo hi')) * 1000,
    ) / 1000,
  [`pool at ${bigRss} MiB / at start (target ≤ 1.5)`]: ratio(
    p50(atBig, 'pool: echo hi'),
    p50(atStart, 'pool: echo hi'),
  ),
  [`direct at ${bigRss} MiB / at start`]: ratio(
    p50(atBig, 'direct (helper): echo hi'),
    p50(atStart, 'direct (helper): echo hi'),
  ),
  [`plain spawn at ${bigRss} MiB / at start`]: ratio(
    p50(atBig, 'plain spawn: echo hi'),
    p50(atStart, 'plain spawn: echo hi'),
  ),
};

const lines = [
  `# engine benchmark — node ${process.version}, ${N} samples per method, RSS ${startRss} MiB then ${bigRss} MiB`,
  '',
  '| path | p50 ms | p90 ms | p99 ms |',
  '| --- | ---: | ---: | ---: |',
  ...Object.entries(atStart).map(([name, s]) => `| ${name} | ${s.p50} | ${s.p90} | ${s.p99} |`),
  ...Object.entries(atBig).map(
    ([name, s]) => `| ${name} at ${bigRss} MiB RSS | ${s.p50} | ${s.p90} | ${s.p99} |`,
  ),
  '',
  '| ratio (p50) | value |',
  '| --- | ---: |',
  ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
if (JSON_OUT !== undefined) {
  writeFileSync(JSON_OUT, JSON.stringify({ atStart, atBig, ratios, startRss, bigRss }, null, 2));
}
