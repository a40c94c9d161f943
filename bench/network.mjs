#!/usr/bin/env node
// R7.15, R7.16: what --network none and --network proxy cost a command against --network host,
// in one run: three engines of this checkout over one scope, `sandboxed_shell`'s path (a warm
// shell, `echo hi`), per round 300 sequential calls (p50) and 2000 with 8 in flight (calls/s), the
// modes taking turns. Under proxy each command also gets its own pass (a token in its proxy
// variables) and the executor's grant bookkeeping; it opens no connection.
//
//   pnpm build && node bench/network.mjs [--rounds 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createEngine } from '@ahma/core';
import { numberOption } from './args.mjs';

const ROUNDS = numberOption('rounds', 3);
const scope = mkdtempSync('/var/tmp/ahma-bench-network-');
process.on('exit', () => rmSync(scope, { recursive: true, force: true }));

const engines = {
  host: await createEngine({ scope }),
  proxy: await createEngine({ scope, network: 'proxy' }),
  none: await createEngine({ scope, network: 'none' }),
};
const run = (engine) =>
  engine.executor.run({ command: { kind: 'shell', script: 'echo hi' }, cwd: scope, logName: 'x' });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const results = Object.fromEntries(
  Object.keys(engines).map((mode) => [mode, { p50: [], rate: [] }]),
);
for (const engine of Object.values(engines)) for (let i = 0; i < 100; i++) await run(engine);
for (let round = 0; round < ROUNDS; round++) {
  for (const [mode, engine] of Object.entries(engines)) {
    const times = [];
    for (let i = 0; i < 300; i++) {
      const started = performance.now();
      await run(engine);
      times.push(performance.now() - started);
    }
    results[mode].p50.push(median(times));
    let taken = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (taken++ < 2000) await run(engine);
      }),
    );
    results[mode].rate.push((2000 / (performance.now() - started)) * 1000);
  }
}
for (const engine of Object.values(engines)) await engine.close();

const line = (mode) =>
  `| ${mode} | ${results[mode].p50.map((v) => v.toFixed(3)).join(', ')} | ${median(results[mode].p50).toFixed(3)} | ${results[mode].rate.map((v) => v.toFixed(0)).join(', ')} | ${median(results[mode].rate).toFixed(0)} |`;
const ratio = (mode) =>
  `${mode}/host: p50 ${(median(results[mode].p50) / median(results.host.p50)).toFixed(3)}, calls/s ${(median(results[mode].rate) / median(results.host.rate)).toFixed(3)}`;
process.stdout.write(
  [
    `# --network proxy and none against host — node ${process.version}, ${String(ROUNDS)} rounds`,
    '',
    '| mode | p50 ms (rounds) | median | calls/s, 8 in flight (rounds) | median |',
    '| --- | --- | ---: | --- | ---: |',
    ...Object.keys(engines).map(line),
    '',
    ratio('proxy'),
    ratio('none'),
    '',
  ].join('\n'),
);
