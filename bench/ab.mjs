#!/usr/bin/env node
// A/B: this checkout's ahma-shell against another built checkout's, side by side in one run, so a
// change is measured against the same noise (machines here vary by ±50% within minutes).
//
//   pnpm build && node bench/ab.mjs OTHER_CHECKOUT [--n 400] [--burst 3000] [--rounds 3] [--http]
//                                                   [--project]
//
// OTHER_CHECKOUT: e.g. `git worktree add /tmp/before REV && (cd /tmp/before && pnpm install &&
// pnpm build)`. Both servers run `ahma-shell --sync` and get `sandboxed_shell {"command":"echo
// hi"}`: --n sequential calls, round-robin in chunks of 10; then, per round and server, calls/s
// with 8 in flight (after an untimed quarter-burst warm-up) and the machine's busy CPU time per
// call during that burst (from /proc/stat: every process, the kernel's work included).
//
// --http: each build also runs `ahma-shell --mode http --http-port 0 --sync`, and the sequential
// calls go round-robin over all four (each build over stdio and over Streamable HTTP, the SDK's
// Client and StreamableHTTPClientTransport, one session each); reported: p50/p90 per build and
// transport, after/before (this checkout / OTHER_CHECKOUT) per transport, and each build's
// HTTP/stdio. A build whose HTTP server requires a bearer token names where it is on stderr
// (bench/servers.mjs reads it and every request carries it); a build without authentication
// names none and gets no header. The bursts stay stdio only.
//
// --project: the scope is a git repository with .vscode/tasks.json and .ahma/tools, as a real
// project is, so a build that protects hand-off files (issue 24) has them to protect and watch.
//
// Every server gets TMPDIR in the benchmark's own directory (under /var/tmp): Ahma refuses to start
// when its code lies where sandboxed commands can write, and the temp directory is writable, so a
// checkout under /tmp (e.g. /tmp/before) would not start with TMPDIR unset.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { summarize } from './stats.mjs';
import { numberOption } from './args.mjs';
import { startAhmaHttp, stopProcess } from './servers.mjs';

const args = process.argv.slice(2);
const other = args[0];
if (other === undefined || other.startsWith('--')) {
  process.stderr.write(
    'usage: node bench/ab.mjs OTHER_CHECKOUT [--n 400] [--burst 3000] [--rounds 3] [--http] [--project]\n',
  );
  process.exit(2);
}
const N = numberOption('n', 400);
const BURST = numberOption('burst', 3000);
const ROUNDS = numberOption('rounds', 3);
const HTTP = args.includes('--http');
const INFLIGHT = 8;

const root = mkdtempSync('/var/tmp/ahma-ab-');
// Removed at the end, and also when the script fails half-way (its HTTP servers are killed first).
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
const tmp = join(root, 'tmp');
mkdirSync(scope);
mkdirSync(tmp);
if (args.includes('--project')) {
  execFileSync('git', ['init', '-q', scope]);
  mkdirSync(join(scope, '.vscode'));
  writeFileSync(join(scope, '.vscode', 'tasks.json'), '{"version":"2.0.0","tasks":[]}\n');
  mkdirSync(join(scope, '.ahma', 'tools'), { recursive: true });
}
const builds = {
  [resolve(other)]: resolve(other),
  this: join(dirname(fileURLToPath(import.meta.url)), '..'),
};
let servers = 0;
const envFor = () => ({
  ...process.env,
  TMPDIR: tmp,
  XDG_CACHE_HOME: join(root, `cache-${servers++}`),
});

// kind: `${build} stdio` or `${build} http` → { client, pid (the server's node process), close }
const kinds = {};
const stdioClients = {};
const httpAuth = {};
for (const [name, dir] of Object.entries(builds)) {
  const bin = join(dir, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
  const client = new Client({ name: 'ahma-ab', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, '--mode', 'stdio', '--sync', '--sandbox-scope', scope],
    cwd: scope,
    env: envFor(),
    stderr: 'ignore',
  });
  await client.connect(transport);
  stdioClients[name] = client;
  kinds[`${name} stdio`] = { client, pid: transport.pid, close: () => client.close() };
  if (HTTP) {
    const server = await startAhmaHttp(
      [bin, '--mode', 'http', '--http-port', '0', '--sync', '--sandbox-scope', scope],
      { cwd: scope, env: envFor() },
    );
    if (server.refused !== undefined)
      throw new Error(`${name}: ahma-shell --mode http did not start: ${server.refused.stderr}`);
    httpAuth[name] = server.headers.authorization === undefined ? 'none' : 'bearer token';
    const httpClient = new Client({ name: 'ahma-ab', version: '1' });
    const httpTransport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers },
    });
    await httpClient.connect(httpTransport);
    kinds[`${name} http`] = {
      client: httpClient,
      pid: server.child.pid,
      close: async () => {
        await httpTransport.terminateSession();
        await httpClient.close();
        await stopProcess(server.child);
      },
    };
  }
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
/** CPU ms of one process so far (utime + stime; 10 ms ticks). */
function processCpuMs(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
async function burst(client, count) {
  let next = 0;
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next++ < count) await call(client);
    }),
  );
}

const latency = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, []]));
const serverCpu = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, 0]));
const rate = Object.fromEntries(Object.keys(builds).map((name) => [name, []]));
const cpu = Object.fromEntries(Object.keys(builds).map((name) => [name, []]));
for (const { client } of Object.values(kinds)) for (let i = 0; i < 50; i++) await call(client);
for (let done = 0; done < N; done += 10) {
  for (const [kind, { client, pid }] of Object.entries(kinds)) {
    const cpu0 = processCpuMs(pid);
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await call(client);
      latency[kind].push(performance.now() - started);
    }
    serverCpu[kind] += processCpuMs(pid) - cpu0;
  }
}
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, client] of Object.entries(stdioClients)) {
    await burst(client, Math.ceil(BURST / 4));
    const busy = busyMs();
    const started = performance.now();
    await burst(client, BURST);
    rate[name].push(Math.round(BURST / ((performance.now() - started) / 1000)));
    cpu[name].push(Math.round(((busyMs() - busy) / BURST) * 1000) / 1000);
  }
}
for (const { close } of Object.values(kinds)) await close();
rmSync(root, { recursive: true, force: true });

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const r2 = (x) => Math.round(x * 100) / 100;
const r3 = (x) => Math.round(x * 1000) / 1000;
const s = (kind) => summarize(latency[kind]);
const cpuPerCall = (kind) => r3(serverCpu[kind] / latency[kind].length);
const [before, after] = Object.keys(builds);
const lines = [
  `# A/B — node ${process.version}, ${N} sequential calls each, ${ROUNDS} rounds of ${BURST} with ${INFLIGHT} in flight${HTTP ? ' (stdio); --http: stdio and Streamable HTTP round-robin' : ''}`,
  '',
  '| build | p50 ms | p90 ms | calls/s (rounds) | median calls/s | CPU ms per call (rounds) | median CPU ms |',
  '| --- | ---: | ---: | --- | ---: | --- | ---: |',
  ...Object.keys(builds).map((name) => {
    const t = s(`${name} stdio`);
    return `| ${name} | ${t.p50} | ${t.p90} | ${rate[name].join(', ')} | ${median(rate[name])} | ${cpu[name].join(', ')} | ${median(cpu[name])} |`;
  }),
];
if (HTTP) {
  lines.push(
    '',
    `## Sequential calls, stdio and Streamable HTTP (${N} each, round-robin in chunks of 10; server CPU = the server's node process, /proc ticks of 10 ms)`,
    '',
    '| build | HTTP auth | stdio p50 ms | stdio p90 ms | HTTP p50 ms | HTTP p90 ms | HTTP/stdio p50 | HTTP/stdio p90 | server CPU ms/call stdio | HTTP |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...Object.keys(builds).map((name) => {
      const [st, ht] = [s(`${name} stdio`), s(`${name} http`)];
      return `| ${name} | ${httpAuth[name]} | ${st.p50} | ${st.p90} | ${ht.p50} | ${ht.p90} | ${r2(ht.p50 / st.p50)} | ${r2(ht.p90 / st.p90)} | ${cpuPerCall(`${name} stdio`)} | ${cpuPerCall(`${name} http`)} |`;
    }),
    '',
    `| after/before (${after} / ${before}) | ratio |`,
    '| --- | ---: |',
    ...['stdio', 'http'].flatMap((transport) => {
      const label = transport === 'http' ? 'Streamable HTTP' : 'stdio';
      const [b, a] = [s(`${before} ${transport}`), s(`${after} ${transport}`)];
      const [cb, ca] = [cpuPerCall(`${before} ${transport}`), cpuPerCall(`${after} ${transport}`)];
      return [
        `| ${label} p50 | ${r2(a.p50 / b.p50)} |`,
        `| ${label} p90 | ${r2(a.p90 / b.p90)} |`,
        `| ${label} server CPU per call | ${cb > 0 ? r2(ca / cb) : ''} |`,
      ];
    }),
    `| median calls/s, stdio, ${INFLIGHT} in flight | ${r2(median(rate[after]) / median(rate[before]))} |`,
    `| median machine CPU per call, stdio bursts | ${r2(median(cpu[after]) / median(cpu[before]))} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
