#!/usr/bin/env node
// MCP benchmark: the round trip of a sandboxed `echo hi` through ahma-shell over stdio, side by side
// with the pure-protocol floor and a spawn-per-call peer, in one run.
//
//   pnpm build && node bench/mcp.mjs [--n 300] [--inflight 8] [--burst 2000] [--cold 10] [--rounds 1]
//
//   ahma (pool)      ahma-shell --sync, sandboxed_shell {"command":"echo hi"} — warm shells
//   ahma (no pool)   the same with --no-shell-pool: a fresh sandboxed spawn per call
//   floor            @modelcontextprotocol/server-everything's echo tool: protocol only, no process
//   fork floor       bench/fork-floor-server.mjs's run "echo hi": a warm bash forks a subshell per
//                    call, no sandbox, no supervision (issue 31's process-per-command floor)
//   fork floor, supervised   the same with --supervised: the subshell forks the command a process
//                    of its own and waits for it (two processes per call, still no sandbox): the
//                    floor of a design in which every command keeps its own supervised process
//   peer             mcp-server-commands' run_command "echo hi": a plain spawn per call, no sandbox
// Sequential calls are sampled round-robin in chunks of 10 across the connected servers, so they
// share the machine's noise. Then: calls/s with --inflight calls in flight (after an untimed
// warm-up burst of the same size) for each server. --rounds repeats both on the same servers and
// reports each round and their median. Last, cold start (spawn + initialize + tools/list with 10
// tool files), median of --cold starts.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { summarize } from './stats.mjs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeBenchTools } from './tool-files.mjs';
import { numberOption } from './args.mjs';

const N = numberOption('n', 300);
const INFLIGHT = numberOption('inflight', 8);
const BURST = numberOption('burst', 2000);
const COLD = numberOption('cold', 10);
const ROUNDS = numberOption('rounds', 1);
const CHUNK = 10;

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const ahmaBin = join(here, '..', 'packages', 'shell-server', 'bin', 'ahma-shell.js');
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const forkFloor = join(here, 'fork-floor-server.mjs');
const commands = join(
  dirname(require.resolve('mcp-server-commands/package.json')),
  'build',
  'index.js',
);

const root = mkdtempSync('/var/tmp/ahma-mcp-bench-');
const scope = join(root, 'scope');
const tools = join(scope, '.ahma', 'tools');
// Ten small definitions, so cold start loads and validates a realistic tools directory.
writeBenchTools(tools);
const env = { ...process.env, XDG_CACHE_HOME: join(root, 'cache') };

async function connect(command, commandArgs) {
  const client = new Client({ name: 'ahma-bench', version: '1' });
  await client.connect(
    new StdioClientTransport({ command, args: commandArgs, cwd: scope, env, stderr: 'ignore' }),
  );
  return client;
}

const servers = {
  'ahma (pool)': {
    client: await connect('node', [ahmaBin, '--mode', 'stdio', '--sync', '--sandbox-scope', scope]),
    call: { name: 'sandboxed_shell', arguments: { command: 'echo hi' } },
    expect: 'hi',
  },
  'ahma (no pool)': {
    client: await connect('node', [
      ahmaBin,
      '--mode',
      'stdio',
      '--sync',
      '--no-shell-pool',
      '--sandbox-scope',
      scope,
    ]),
    call: { name: 'sandboxed_shell', arguments: { command: 'echo hi' } },
    expect: 'hi',
  },
  'floor (server-everything echo)': {
    client: await connect('node', [everything, 'stdio']),
    call: { name: 'echo', arguments: { message: 'hi' } },
    expect: 'Echo: hi',
  },
  'fork floor (warm bash, a fork per call)': {
    client: await connect('node', [forkFloor]),
    call: { name: 'run', arguments: { command: 'echo hi' } },
    expect: 'hi',
  },
  'fork floor, supervised (a fork of the fork per call)': {
    client: await connect('node', [forkFloor, '--supervised']),
    call: { name: 'run', arguments: { command: 'echo hi' } },
    expect: 'hi',
  },
  'peer (mcp-server-commands)': {
    client: await connect('node', [commands]),
    call: { name: 'run_command', arguments: { command: 'echo hi' } },
    expect: 'hi',
  },
};

async function callOnce({ client, call, expect }) {
  const started = performance.now();
  const result = await client.callTool(call);
  const elapsed = performance.now() - started;
  const text = result.content.map((part) => part.text ?? '').join('');
  if (result.isError || !text.includes(expect))
    throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  return elapsed;
}

// Sequential round trips, round-robin.
async function sequentialRound() {
  const samples = Object.fromEntries(Object.keys(servers).map((name) => [name, []]));
  for (const server of Object.values(servers)) for (let i = 0; i < 10; i++) await callOnce(server);
  for (let done = 0; done < N; done += CHUNK) {
    for (const [name, server] of Object.entries(servers)) {
      for (let i = 0; i < CHUNK && done + i < N; i++) samples[name].push(await callOnce(server));
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, summarize(xs)]));
}

// Throughput with INFLIGHT calls in flight, in the steady state: an untimed burst of the same size
// first, so every server's JIT has compiled its hot paths for concurrent calls before the clock runs.
async function throughput(server, total) {
  const burst = async (count) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: INFLIGHT }, async () => {
        while (next++ < count) await callOnce(server);
      }),
    );
  };
  await burst(total);
  const started = performance.now();
  await burst(total);
  return Math.round(total / ((performance.now() - started) / 1000));
}
/** The servers that spawn a process of their own per call are slower: a fifth of the burst. */
const slow = new Set(['ahma (no pool)', 'peer (mcp-server-commands)']);
async function throughputRound() {
  const perSecond = {};
  for (const [name, server] of Object.entries(servers)) {
    perSecond[name] = await throughput(server, slow.has(name) ? Math.max(200, BURST / 5) : BURST);
  }
  return perSecond;
}

const rounds = [];
for (let round = 0; round < ROUNDS; round++) {
  rounds.push({ sequential: await sequentialRound(), callsPerSecond: await throughputRound() });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const sequential = Object.fromEntries(
  Object.keys(servers).map((name) => [
    name,
    Object.fromEntries(
      ['p50', 'p90', 'p99'].map((key) => [key, median(rounds.map((r) => r.sequential[name][key]))]),
    ),
  ]),
);
const callsPerSecond = Object.fromEntries(
  Object.keys(servers).map((name) => [name, median(rounds.map((r) => r.callsPerSecond[name]))]),
);

for (const server of Object.values(servers)) await server.client.close();

// Cold start: spawn, initialize, tools/list with the ten tool files.
const cold = [];
for (let i = 0; i < COLD; i++) {
  const started = performance.now();
  const client = await connect('node', [ahmaBin, '--mode', 'stdio', '--sandbox-scope', scope]);
  const { tools: listed } = await client.listTools();
  cold.push(performance.now() - started);
  if (listed.length < 24) throw new Error(`expected 24 tools, got ${listed.length}`);
  await client.close();
}
rmSync(root, { recursive: true, force: true });

const p50 = (name) => sequential[name].p50;
const ratio = (a, b) => Math.round((a / b) * 100) / 100;
const FORK_FLOOR = 'fork floor (warm bash, a fork per call)';
const SUPERVISED_FLOOR = 'fork floor, supervised (a fork of the fork per call)';
const ratios = {
  'ahma (pool) / floor (target ≤ 2.5)': ratio(
    p50('ahma (pool)'),
    p50('floor (server-everything echo)'),
  ),
  'ahma (pool) / fork floor, p50 (issue 31: ≤ 1.25)': ratio(p50('ahma (pool)'), p50(FORK_FLOOR)),
  [`ahma (pool) / fork floor, calls/s with ${INFLIGHT} in flight (issue 31: ≥ 0.75)`]: ratio(
    callsPerSecond['ahma (pool)'],
    callsPerSecond[FORK_FLOOR],
  ),
  'peer / ahma (pool) (target ≥ 4; issue 31: ≥ 2)': ratio(
    p50('peer (mcp-server-commands)'),
    p50('ahma (pool)'),
  ),
  'fork floor, supervised / fork floor, p50 (a supervised process per command at the least)': ratio(
    p50(SUPERVISED_FLOOR),
    p50(FORK_FLOOR),
  ),
  'peer / fork floor, supervised, p50': ratio(
    p50('peer (mcp-server-commands)'),
    p50(SUPERVISED_FLOOR),
  ),
  'ahma (pool) / fork floor, supervised, p50': ratio(p50('ahma (pool)'), p50(SUPERVISED_FLOOR)),
  'ahma (no pool) / ahma (pool) (target ≥ 3)': ratio(p50('ahma (no pool)'), p50('ahma (pool)')),
  [`ahma (pool) calls/s with ${INFLIGHT} in flight (target ≥ 2000)`]: callsPerSecond['ahma (pool)'],
};

const lines = [
  `# MCP benchmark — node ${process.version}, ${N} sequential calls per server, ${INFLIGHT} in flight, ${ROUNDS} round(s)`,
  '',
  ...(ROUNDS > 1 ? ['The medians of the rounds:', ''] : []),
  `| server | p50 ms | p90 ms | p99 ms | calls/s (${INFLIGHT} in flight) |`,
  '| --- | ---: | ---: | ---: | ---: |',
  ...Object.entries(sequential).map(
    ([name, s]) => `| ${name} | ${s.p50} | ${s.p90} | ${s.p99} | ${callsPerSecond[name]} |`,
  ),
  ...(ROUNDS > 1
    ? [
        '',
        '| server | p50 ms by round | calls/s by round |',
        '| --- | --- | --- |',
        ...Object.keys(servers).map(
          (name) =>
            `| ${name} | ${rounds.map((r) => r.sequential[name].p50).join(', ')} | ${rounds.map((r) => r.callsPerSecond[name]).join(', ')} |`,
        ),
      ]
    : []),
  '',
  `cold start (spawn + initialize + tools/list, 10 tool files → 24 tools): p50 ${summarize(cold).p50} ms over ${COLD}`,
  '',
  '| ratio | value |',
  '| --- | ---: |',
  ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value} |`),
];
process.stdout.write(`${lines.join('\n')}\n`);
