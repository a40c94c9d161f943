#!/usr/bin/env node
// Zygote benchmark: the round trip of one request through the pool zygote of the sandbox helper
// (`ahma-sandbox --pool 2 --`, R4.1), spoken to over its pipes with no engine in between: from
// writing the R frame to reading the X frame, for argv `/bin/true`, argv `echo hi` and the script
// `echo hi` in a warm shell; then, for comparison, a fresh spawn of the helper from Node per
// command (`ahma-sandbox -- echo hi`, the path without the pool).
//
//   pnpm build && node bench/zygote.mjs [--n 100] [--baseline OTHER] [--json out.json]
//
// --baseline OTHER measures another build's helper the same way in the same run: OTHER is a built
// checkout (its packages/core/dist/native/linux-<arch>/ahma-sandbox) or the path of an ahma-sandbox binary.
// Methods are sampled round-robin in chunks of 10 so they share the machine's noise: compare
// ratios within one run, never absolute times across runs.
//
// Frames (native/zygote.c): a 9-byte header (type u8 ASCII, id u32 LE, length u32 LE) and `length`
// payload bytes. R: cwd NUL mode NUL word NUL …; the zygote answers S (started), O (output), then
// X (exit code i32, signal i32) or E (error text).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { summarize } from './stats.mjs';
import { option } from './args.mjs';

const N = Number(option('n', 100));
const BASELINE = option('baseline', undefined);
const JSON_OUT = option('json', undefined);
const CHUNK = 10;
const HEADER = 9;
const HELPER_IN_CHECKOUT = join(
  'packages',
  'core',
  'dist',
  'native',
  `${process.platform}-${process.arch}`,
  'ahma-sandbox',
);

const helper = fileURLToPath(new URL(`../${HELPER_IN_CHECKOUT}`, import.meta.url));
const helpers = { 'this build': helper };
if (BASELINE !== undefined) {
  const path = resolve(BASELINE);
  helpers[path] =
    existsSync(path) && statSync(path).isDirectory() ? join(path, HELPER_IN_CHECKOUT) : path;
}
for (const binary of Object.values(helpers)) {
  if (!existsSync(binary)) {
    process.stderr.write(`no helper at ${binary}: build it first (pnpm build)\n`);
    process.exit(2);
  }
}

const root = mkdtempSync('/var/tmp/ahma-bench-zygote-');
const scope = join(root, 'scope');
mkdirSync(scope);

/** A zygote over its pipes: run() sends one R frame and resolves with its X or E frame. */
function startZygote(binary) {
  const child = spawn(binary, ['--read-all', '--rw', scope, '--pool', '2', '--'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map();
  let pending = Buffer.alloc(0);
  let nextId = 1;
  child.stdout.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= HEADER) {
      const length = pending.readUInt32LE(5);
      if (pending.length < HEADER + length) break;
      const type = String.fromCharCode(pending[0]);
      const id = pending.readUInt32LE(1);
      const payload = pending.subarray(HEADER, HEADER + length);
      pending = pending.subarray(HEADER + length);
      if (type === 'X' || type === 'E') {
        waiting.get(id)?.({ type, code: type === 'X' ? payload.readInt32LE(0) : null, payload });
        waiting.delete(id);
      }
    }
  });
  const exited = new Promise((done) => child.on('close', done));
  return {
    run(mode, words) {
      const id = nextId++;
      const payload = Buffer.concat(
        [scope, mode, ...words].map((field) => Buffer.from(`${field}\0`, 'utf8')),
      );
      const header = Buffer.alloc(HEADER);
      header.write('R', 0, 1, 'latin1');
      header.writeUInt32LE(id, 1);
      header.writeUInt32LE(payload.length, 5);
      return new Promise((done) => {
        waiting.set(id, done);
        child.stdin.write(Buffer.concat([header, payload]));
      });
    },
    close() {
      child.stdin.end();
      return exited;
    },
  };
}

function viaZygote(zygote, mode, words) {
  return async () => {
    const started = performance.now();
    const answer = await zygote.run(mode, words);
    const elapsed = performance.now() - started;
    if (answer.code !== 0) throw new Error(`${answer.type} ${answer.code}: ${answer.payload}`);
    return elapsed;
  };
}

function freshSpawn(binary) {
  return () =>
    new Promise((done, fail) => {
      const started = performance.now();
      const child = spawn(binary, ['--read-all', '--rw', scope, '--', 'echo', 'hi'], {
        stdio: 'ignore',
      });
      child.once('error', fail);
      child.once('close', (code) =>
        code === 0 ? done(performance.now() - started) : fail(new Error(`exit ${code}`)),
      );
    });
}

const zygotes = [];
const methods = {};
for (const [name, binary] of Object.entries(helpers)) {
  const zygote = startZygote(binary);
  zygotes.push(zygote);
  methods[`${name}: pool, argv /bin/true`] = viaZygote(zygote, 'argv', ['/bin/true']);
  methods[`${name}: pool, argv echo hi`] = viaZygote(zygote, 'argv', ['echo', 'hi']);
  methods[`${name}: pool, shell "echo hi"`] = viaZygote(zygote, 'shell', ['echo hi']);
  methods[`${name}: fresh spawn, echo hi`] = freshSpawn(binary);
}

// Warm-up: every method a few times, then a moment for the pools to refill.
for (const run of Object.values(methods)) for (let i = 0; i < 5; i++) await run();
await new Promise((done) => setTimeout(done, 200));

const samples = Object.fromEntries(Object.keys(methods).map((name) => [name, []]));
for (let done = 0; done < N; done += CHUNK) {
  for (const [name, run] of Object.entries(methods)) {
    for (let i = 0; i < CHUNK && done + i < N; i++) samples[name].push(await run());
  }
}
await Promise.all(zygotes.map((zygote) => zygote.close()));
rmSync(root, { recursive: true, force: true });

const results = Object.fromEntries(
  Object.entries(samples).map(([name, xs]) => [name, summarize(xs)]),
);
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
const ratios = Object.fromEntries(
  Object.keys(helpers).map((name) => [
    `${name}: fresh spawn / pool, argv echo hi`,
    ratio(results[`${name}: fresh spawn, echo hi`].p50, results[`${name}: pool, argv echo hi`].p50),
  ]),
);
const lines = [
  `# zygote benchmark — node ${process.version}, ${N} samples per method, request → X`,
  '',
  '| path | p50 ms | p90 ms | p99 ms |',
  '| --- | ---: | ---: | ---: |',
  ...Object.entries(results).map(([name, s]) => `| ${name} | ${s.p50} | ${s.p90} | ${s.p99} |`),
  '',
  '| ratio (p50) | value |',
  '| --- | ---: |',
  ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
if (JSON_OUT !== undefined) writeFileSync(JSON_OUT, JSON.stringify({ results, ratios }, null, 2));
