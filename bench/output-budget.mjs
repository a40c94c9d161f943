#!/usr/bin/env node
// R15.2 (issue 26 item 6): what a noisy failed build costs the model before and after the output
// budget, in bytes and in tokens (estimated as bytes / 4, as the budget itself). The fixture is
// bench/noisy-build.mjs (progress bars drawn with carriage returns, ANSI colours, a run of
// identical `Compiling` lines, warnings, the error at the end), written to a file in the scope
// and printed by `cat` in the sandbox, exit code 101 as cargo's.
//
// - raw: every byte the command printed (what the log keeps);
// - before: what the collector kept until now, emulated on the raw bytes: the first 16 KiB and
//   the last 32 KiB, ANSI escapes stripped, nothing else cleaned (plus its one-line marker);
// - cleaned, whole: this collector with the largest budget (200,000 tokens): the cleaning alone;
// - after: this collector at the default budget (10,000 tokens), and at 2,000 tokens.
//
// Then the time a call takes through the engine (direct spawn, medians of --rounds): the fixture
// with its output collected, against the same command with its output sent to /dev/null; and the
// same for 50 MiB of `yes 'line of text'` (the log holds all of it, the result stays within the
// budget).
//
//   pnpm build && node bench/output-budget.mjs [--rounds 5] [--crates 400] [--repeats 1500] [--show]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine } from '@ahma/core';
import { numberOption } from './args.mjs';
import { noisyBuild } from './noisy-build.mjs';

const ROUNDS = numberOption('rounds', 5);
const SHOW = process.argv.includes('--show');
const raw = Buffer.from(
  noisyBuild({ crates: numberOption('crates', 400), repeats: numberOption('repeats', 1500) }),
);
const scope = mkdtempSync('/var/tmp/ahma-bench-output-');
process.on('exit', () => rmSync(scope, { recursive: true, force: true }));
writeFileSync(join(scope, 'noisy.log'), raw);

// The old collector's ANSI pattern and cut (OutputCollector before R15.2).
const ANSI =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]/g;
const strip = (bytes) => bytes.toString('utf8').replace(ANSI, '');
function before(bytes) {
  const head = 16 * 1024;
  const tail = 32 * 1024;
  if (bytes.length <= head + tail) return strip(bytes);
  const elided = bytes.length - head - tail;
  const marker = `\n[… ${String(elided)} bytes elided (of ${String(bytes.length)}); full output: /home/user/.local/state/ahma/servers/0123456789ab/output/op_0123456789ab_1-0123456789abcdef.log …]\n`;
  return `${strip(bytes.subarray(0, head))}${marker}${strip(bytes.subarray(-tail))}`;
}

const engines = {
  default: await createEngine({ scope, noShellPool: true }),
  largest: await createEngine({ scope, noShellPool: true, maxOutputTokens: 200_000 }),
};
let names = 0;
const run = (engine, script, maxOutputTokens) =>
  engine.executor.run({
    command: { kind: 'shell', script },
    cwd: scope,
    logName: `op_bench_${String(++names)}`,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
  });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const bytesOf = (text) => Buffer.byteLength(text);
const tokens = (bytes) => Math.round(bytes / 4);

const BUILD = 'cat noisy.log; exit 101';
const after = await run(engines.default, BUILD);
const small = await run(engines.default, BUILD, 2000);
const cleaned = await run(engines.largest, BUILD);
const rows = [
  ['raw (the log)', raw.length],
  ['before: 16 KiB + 32 KiB, ANSI stripped', bytesOf(before(raw))],
  ['cleaned, whole (budget 200,000 tokens)', bytesOf(cleaned.output)],
  ['after: budget 10,000 tokens (default)', bytesOf(after.output)],
  ['after: max_output_tokens 2,000', bytesOf(small.output)],
];

const timed = async (script) => {
  const times = [];
  let last;
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    last = await run(engines.default, script);
    times.push(performance.now() - started);
  }
  return { times, result: last };
};
await run(engines.default, 'true'); // warm-up
const FIFTY = "yes 'line of text' | head -c 52428800";
const timings = {
  'noisy build, collected': await timed(BUILD),
  'noisy build, to /dev/null': await timed('cat noisy.log > /dev/null; exit 101'),
  '50 MiB, collected': await timed(FIFTY),
  '50 MiB, to /dev/null': await timed(`${FIFTY} > /dev/null`),
};
for (const engine of Object.values(engines)) await engine.close();

const lines = [
  `# R15.2: a noisy failed build before and after the output budget — node ${process.version}`,
  '',
  `fixture: ${String(raw.length)} bytes, ${String(raw.toString().split('\n').length - 1)} lines (bench/noisy-build.mjs)`,
  '',
  '| what the model is handed | bytes | tokens (bytes / 4) | / before |',
  '| --- | ---: | ---: | ---: |',
  ...rows.map(
    ([what, bytes]) =>
      `| ${what} | ${String(bytes)} | ${String(tokens(bytes))} | ${(bytes / (rows[1]?.[1] ?? 1)).toFixed(3)} |`,
  ),
  '',
  `| call through the engine (${String(ROUNDS)} rounds) | ms (rounds) | median | result bytes |`,
  '| --- | --- | ---: | ---: |',
  ...Object.entries(timings).map(
    ([what, { times, result }]) =>
      `| ${what} | ${times.map((t) => t.toFixed(0)).join(', ')} | ${median(times).toFixed(0)} | ${String(bytesOf(result.output))} |`,
  ),
  '',
];
process.stdout.write(lines.join('\n'));
if (SHOW) process.stdout.write(`\n--- after (default budget) ---\n${after.output}`);
