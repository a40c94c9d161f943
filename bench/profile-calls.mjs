#!/usr/bin/env node
// Where a call's time goes in ahma-shell (issue 31, item 1): this checkout's server, `--sync`,
// answers N sequential `sandboxed_shell {"command": "echo hi"}` calls from the SDK's Client over
// stdio after a warm-up, under Node's CPU profiler, and (with --strace) under `strace -c -f`,
// which counts the system calls of the server. Prints the p50, the server's main-thread time per
// call by where it is spent, and the system calls per call. With --perf instead: no profiler in
// the server; `perf record -a` samples the whole machine during the timed calls, and the CPU per
// call is printed by process name (the server, the zygote, the sandbox helper, bash, echo, this
// client, the kernel's threads).
//
//   pnpm build && node bench/profile-calls.mjs [--n 2000] [--strace | --perf]
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { numberOption } from './args.mjs';
import { summarize } from './stats.mjs';

const N = numberOption('n', 2000);
const STRACE = process.argv.includes('--strace');
const PERF = process.argv.includes('--perf');
const WARM_UP = 500;
const here = join(fileURLToPath(import.meta.url), '..', '..');
const bin = join(here, 'packages', 'shell-server', 'bin', 'ahma-shell.js');

// Under /var/tmp: Ahma refuses to start when its code lies where commands can write.
const root = mkdtempSync('/var/tmp/ahma-profile-');
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
const tmp = join(root, 'tmp');
const profiles = join(root, 'profiles');
for (const dir of [scope, tmp, profiles]) mkdirSync(dir);

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    ...(PERF ? [] : ['--cpu-prof', `--cpu-prof-dir=${profiles}`]),
    bin,
    '--mode',
    'stdio',
    '--sync',
  ],
  cwd: scope,
  env: { ...process.env, TMPDIR: tmp },
  stderr: 'ignore',
});
const client = new Client({ name: 'profile-calls', version: '1' });
await client.connect(transport);
const call = () => client.callTool({ name: 'sandboxed_shell', arguments: { command: 'echo hi' } });
for (let i = 0; i < WARM_UP; i++) await call();

const strace = STRACE
  ? spawn('strace', ['-c', '-f', '-q', '-p', String(transport.pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
  : undefined;
let straceText = '';
const perfData = join(root, 'perf.data');
const perf = PERF
  ? spawn('perf', ['record', '-a', '-F', '1999', '-o', perfData], { stdio: 'ignore' })
  : undefined;
strace?.stderr.on('data', (chunk) => (straceText += chunk));
// strace needs a moment to attach to the threads before the timed calls.
if (strace !== undefined || perf !== undefined) {
  await new Promise((resolve) => setTimeout(resolve, 500));
}

const times = [];
for (let i = 0; i < N; i++) {
  const started = performance.now();
  await call();
  times.push(performance.now() - started);
}
if (strace !== undefined) {
  const ended = new Promise((resolve) => strace.once('close', resolve));
  strace.kill('SIGINT');
  await ended;
}
// perf names threads, not processes: the server's and this client's threads, while they live.
const threadsOf = (pid) => new Set(readdirSync(`/proc/${String(pid)}/task`).map(Number));
const serverThreads = threadsOf(transport.pid);
const clientThreads = threadsOf(process.pid);
if (perf !== undefined) {
  const ended = new Promise((resolve) => perf.once('close', resolve));
  perf.kill('SIGINT');
  await ended;
}
await client.close();
// The profile is written as the server exits.
for (let i = 0; i < 100 && readdirSync(profiles).length === 0; i++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

const { p50, p90 } = summarize(times);
process.stdout.write(
  `# ${String(N)} sequential calls (after ${String(WARM_UP)}): p50 ${p50} ms, p90 ${p90} ms\n\n`,
);
if (PERF) process.stdout.write(byProcess(perfData));
else report(JSON.parse(readFileSync(join(profiles, readdirSync(profiles)[0]), 'utf8')));
if (STRACE)
  process.stdout.write(`\n## System calls (strace -c -f), per call\n\n${perCall(straceText)}\n`);

/** Where a sample was: its function, and the file it is in (native frames have none). */
function whereOf(frame) {
  return frame.url === ''
    ? frame.functionName || '(native)'
    : `${frame.functionName || '(anonymous)'} ${frame.url.split('/').slice(-1)[0]}`;
}

/** The main thread's samples, by the function they were in, in µs per call. */
function report(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  profile.samples.forEach((id, index) => {
    const where = whereOf(byId.get(id).callFrame);
    self.set(where, (self.get(where) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const total = [...self.values()].reduce((sum, value) => sum + value, 0);
  const idle = self.get('(idle)') ?? 0;
  const perCallUs = (us) => (us / (N + WARM_UP)).toFixed(1);
  process.stdout.write(
    `main thread busy: ${perCallUs(total - idle)} µs per call (the whole run, warm-up included)\n\n| where (self time) | µs per call |\n| --- | ---: |\n`,
  );
  const top = [...self].filter(([name]) => name !== '(idle)').sort((a, b) => b[1] - a[1]);
  for (const [where, us] of top.slice(0, 25)) {
    process.stdout.write(`| ${where.replaceAll('|', '\\|')} | ${perCallUs(us)} |\n`);
  }
  // Who calls the three costliest: the functions above them, by the time they account for.
  const parent = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node);
  const label = (node) =>
    `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-1)[0]}:${String(node.callFrame.lineNumber)}`;
  for (const [where] of top.slice(0, 3)) {
    const chains = new Map();
    profile.samples.forEach((id, index) => {
      const node = byId.get(id);
      if (whereOf(node.callFrame) !== where) return;
      const chain = [];
      for (
        let up = parent.get(node.id);
        up !== undefined && chain.length < 14;
        up = parent.get(up.id)
      )
        chain.push(label(up));
      const key = chain.join(' < ');
      chains.set(key, (chains.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0));
    });
    process.stdout.write(`\n${where}, called from:\n`);
    for (const [chain, us] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 3)) {
      process.stdout.write(`  ${perCallUs(us)} µs: ${chain}\n`);
    }
  }
}

/**
 * perf's samples of the whole machine by thread, as CPU µs per call: the server's threads and this
 * client's are both `node`, told apart by their thread ids; the rest (the zygote, each command's
 * helper and shell) are summed by name. The idle task (`swapper`) is left out.
 */
function byProcess(data) {
  const text = execFileSync(
    'perf',
    ['report', '-i', data, '--stdio', '--sort', 'pid', '-F', 'sample,pid'],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const byName = new Map();
  for (const line of text.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+):(.+?)\s*$/.exec(line);
    if (match === null) continue;
    const [, samples, pid, comm] = match;
    if (comm === 'swapper') continue;
    const name = serverThreads.has(Number(pid))
      ? 'ahma-shell (the server)'
      : clientThreads.has(Number(pid))
        ? 'the client (this script)'
        : comm;
    byName.set(name, (byName.get(name) ?? 0) + Number(samples));
  }
  // -F 1999: each sample stands for 1/1999 s of one CPU.
  const us = (samples) => ((samples / 1999) * 1e6) / N;
  const rows = [...byName].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, samples]) => sum + samples, 0);
  return [
    `CPU of the whole machine during the timed calls, idle left out: ${us(total).toFixed(0)} µs per call`,
    '',
    '| process | CPU µs per call |',
    '| --- | ---: |',
    ...rows.slice(0, 12).map(([name, samples]) => `| ${name} | ${us(samples).toFixed(1)} |`),
    '',
  ].join('\n');
}

/** strace -c's table with each count divided by the calls. */
function perCall(text) {
  const rows = text
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(
      (cells) => cells.length >= 5 && /^\d/.test(cells[0] ?? '') && /^\d+$/.test(cells[3] ?? ''),
    );
  const sorted = rows.map((cells) => ({
    name: cells.at(-1),
    calls: Number(cells[3]),
    seconds: Number(cells[1]),
  }));
  sorted.sort((a, b) => b.calls - a.calls);
  return [
    '| system call | per call | µs per call (strace-inflated) |',
    '| --- | ---: | ---: |',
    ...sorted
      .slice(0, 20)
      .map(
        (row) =>
          `| ${row.name} | ${(row.calls / N).toFixed(1)} | ${((row.seconds * 1e6) / N).toFixed(1)} |`,
      ),
  ].join('\n');
}
