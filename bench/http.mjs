#!/usr/bin/env node
// HTTP benchmark: ahma-shell --mode http against the same server over stdio and the pure-protocol
// floor over Streamable HTTP, session start, and many sessions at once, in one run.
//
//   pnpm build && node bench/http.mjs [--n 300] [--starts 100] [--cold 10]
//                                     [--sessions 50] [--per-session 100] [--rounds 2]
//                                     [--isolation]
//
// Every ahma server runs `--sync` and every ahma call is `sandboxed_shell {"command":"echo hi"}`
// (a warm shell of the pool; no tool definition involved). Every HTTP client is the SDK's Client
// over StreamableHTTPClientTransport (the ahma and floor servers answer its POSTs as SSE streams,
// since the SDK's Accept names text/event-stream); every stdio client the SDK's StdioClientTransport.
// ahma's HTTP server requires a bearer token by default: every HTTP client of it sends
// `Authorization: Bearer <token>`, the token read from the file its server names on stderr
// (bench/servers.mjs); a build without authentication names none, and its clients send no header.
//
// 1. Round trip: one session per server, sequential calls, round-robin in chunks of 10 over
//    - ahma, Streamable HTTP   (ahma-shell --mode http --http-port 0 --sync)
//    - ahma, stdio             (ahma-shell --mode stdio --sync)
//    - floor, Streamable HTTP  (@modelcontextprotocol/server-everything streamableHttp, `echo`)
//    - floor, stdio            (the same server over stdio: what the transport alone costs)
//    --n calls each after 50 untimed ones; p50/p90/p99, the CPU time per call of this process
//    (the client) and of the server's node process, and the ratios HTTP/stdio, HTTP/floor.
// 2. Session start over HTTP: a new Client connects (initialize + notifications/initialized) and
//    its first tools/list is answered (a plain request; the SDK's listTools(), which also compiles
//    a validator per output schema on the client, is timed apart); --starts sessions per server,
//    each ended with DELETE (untimed) before the next, round-robin in chunks of 10 with the
//    floor's. Alongside, one per chunk, a stdio cold start (spawn + initialize + tools/list),
//    --cold of them in all.
//    With --isolation a third HTTP server runs with --session-isolation (a process and sandbox
//    scope per session, from the client's roots: these clients declare `roots` and name a
//    directory of their own, under one directory the server's --allowed-roots names). A server
//    that refuses the flag (a build without it) gets the row
//    "skipped: --session-isolation not available" instead of a failure.
// 3. Load: a fresh HTTP server; --sessions sessions opened at once (each initialize + tools/list),
//    then each runs --per-session calls, one after another, all sessions concurrently: wall time,
//    commands/s, per-call p50/p99, CPU per command (the server's node process, its sandbox's
//    process tree, this process: all three share the machine's cores), and memory (VmRSS of the
//    node process, and the sum of VmRSS and of Pss over its process tree: the sandbox zygote, its
//    template bash and the units) at start, before, with the sessions connected, at peak (sampled
//    every 200 ms), after the load, and after every session was ended with DELETE. --rounds
//    rounds on the same server show whether memory grows from one round to the next.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { summarize } from './stats.mjs';
import { writeBenchTools } from './tool-files.mjs';
import { numberOption } from './args.mjs';
import { startAhmaHttp as startAhmaHttpProcess, startProcess, stopProcess } from './servers.mjs';

const args = process.argv.slice(2);
const N = numberOption('n', 300);
const STARTS = numberOption('starts', 100);
const COLD = numberOption('cold', 10);
const SESSIONS = numberOption('sessions', 50);
const PER_SESSION = numberOption('per-session', 100);
const ROUNDS = numberOption('rounds', 2);
const ISOLATION = args.includes('--isolation');
const CHUNK = 10;
if (SESSIONS > 100)
  process.stderr.write(
    `http.mjs: --sessions ${SESSIONS} is above the server's default cap of 100 live sessions; ` +
      'with every session busy or holding its GET stream, the ones above it get 503\n',
  );
const SAMPLE_EVERY_MS = 200;

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const ahmaBin = join(here, '..', 'packages', 'shell-server', 'bin', 'ahma-shell.js');
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

const root = mkdtempSync('/var/tmp/ahma-http-bench-');
// Removed at the end, and also when the script fails half-way (its servers are killed first).
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
const tools = join(scope, '.ahma', 'tools');
// The isolated sessions' own directories (--isolation), one each, named as their clients' roots.
const sessionsDir = join(root, 'sessions');
mkdirSync(sessionsDir);
// The ten small definitions, so tools/list answers 25 tools (20 + the 5 built-in).
writeBenchTools(tools);
let servers = 0;
const envFor = () => ({ ...process.env, XDG_CACHE_HOME: join(root, `cache-${servers++}`) });
const ahmaArgs = (mode) => [ahmaBin, '--mode', mode, '--sync', '--sandbox-scope', scope];

// ---------------------------------------------------------------- servers we start

/** A loopback port nothing listens on (free a moment ago). */
async function freePort() {
  const server = createNetServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An ahma HTTP server: { child, url, headers } (headers: the bearer token every request must
 * carry, read from where the server said it is; none from a build without authentication), or
 * { refused }.
 */
const startAhmaHttp = (extra = []) =>
  startAhmaHttpProcess([...ahmaArgs('http'), '--http-port', '0', ...extra], {
    cwd: scope,
    env: envFor(),
  });

async function startEverythingHttp() {
  const port = await freePort();
  const outcome = await startProcess(
    process.execPath,
    [everything, 'streamableHttp'],
    { cwd: scope, env: { ...process.env, PORT: String(port) } },
    /listening on port (\d+)/,
  );
  if (outcome.refused !== undefined)
    throw new Error(`server-everything did not start: ${JSON.stringify(outcome.refused)}`);
  return { child: outcome.child, url: `http://127.0.0.1:${port}/mcp`, headers: {} };
}

// ---------------------------------------------------------------- clients

let sessionDirs = 0;

/**
 * A new HTTP session's client of `server` ({ url, headers }), not yet connected; every request
 * carries the server's headers (its bearer token). With `roots`, the client declares the roots
 * capability and names a fresh directory of its own under `sessionsDir` (what
 * --session-isolation takes as the session's scope, within its --allowed-roots); otherwise it
 * declares nothing, as bench/mcp.mjs's clients.
 */
function httpClient({ url, headers }, { roots = false } = {}) {
  const client = new Client(
    { name: 'ahma-http-bench', version: '1' },
    roots ? { capabilities: { roots: { listChanged: false } } } : {},
  );
  if (roots) {
    // The session's scope, with the same tool files as the server's.
    const dir = join(sessionsDir, `s${sessionDirs++}`);
    writeBenchTools(join(dir, '.ahma', 'tools'));
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(dir).href, name: 'session' }],
    }));
  }
  return {
    client,
    transport: new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  };
}

/** Ends an HTTP session with DELETE, then closes the client (its GET stream included). */
async function endSession({ client, transport }) {
  await transport.terminateSession();
  await client.close();
}

async function stdioClient(command, commandArgs) {
  const client = new Client({ name: 'ahma-http-bench', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command,
      args: commandArgs,
      cwd: scope,
      env: envFor(),
      stderr: 'ignore',
    }),
  );
  return client;
}

const AHMA_CALL = { name: 'sandboxed_shell', arguments: { command: 'echo hi' } };
const FLOOR_CALL = { name: 'echo', arguments: { message: 'hi' } };

async function callOnce(client, call, expect) {
  const begun = performance.now();
  const result = await client.callTool(call);
  const elapsed = performance.now() - begun;
  const text = result.content.map((part) => part.text ?? '').join('');
  if (result.isError || !text.includes(expect))
    throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  return elapsed;
}

// ---------------------------------------------------------------- /proc

/** Fields of /proc/PID/status in kB (VmRSS, VmHWM), undefined once the process is gone. */
function status(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { rss: field('VmRSS'), hwm: field('VmHWM') };
  } catch {
    return undefined;
  }
}
/** Pss of a process in kB (shared pages split between their users), from smaps_rollup. */
function pss(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1]);
  } catch {
    return 0;
  }
}
/**
 * Parent pid and CPU ms of a process, from /proc/PID/stat: its own (utime + stime), and with its
 * reaped children's (cutime + cstime) added.
 */
function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = (...at) => at.reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
    return { ppid: Number(fields[1]), cpuMs: ticks(11, 12), withChildrenMs: ticks(11, 12, 13, 14) };
  } catch {
    return undefined;
  }
}
/** The process and every live descendant. */
function tree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = stat(entry)?.ppid;
    if (parent === undefined) continue;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(Number(entry));
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) all.push(...(children.get(all[i]) ?? []));
  return all;
}
/**
 * CPU ms of a server's sandbox: its process tree without the server's own process, each process's
 * own time plus its reaped children's (the units the zygote reaps). A process alive at the first
 * reading and reaped by the second is counted twice; those are the few pool units, ~1 ms each.
 */
function sandboxCpuMs(pid) {
  return tree(pid)
    .slice(1)
    .reduce((sum, p) => sum + (stat(p)?.withChildrenMs ?? 0), 0);
}
/** Memory of a server in MiB: its node process, and summed over its process tree. */
function memory(pid, { withPss = true } = {}) {
  const pids = tree(pid);
  let treeRss = 0;
  let treePss = 0;
  for (const p of pids) {
    treeRss += status(p)?.rss ?? 0;
    if (withPss) treePss += pss(p);
  }
  const mib = (kb) => Math.round((kb / 1024) * 10) / 10;
  return {
    rss: mib(status(pid)?.rss ?? 0),
    treeRss: mib(treeRss),
    treePss: withPss ? mib(treePss) : undefined,
    processes: pids.length,
  };
}

// ---------------------------------------------------------------- 1. round trip

const ahmaHttp = await startAhmaHttp();
if (ahmaHttp.refused !== undefined)
  throw new Error(`ahma-shell --mode http did not start: ${JSON.stringify(ahmaHttp.refused)}`);
const floorHttp = await startEverythingHttp();

const connectHttp = async (server) => {
  const session = httpClient(server);
  await session.client.connect(session.transport);
  return session;
};
const ahmaHttpSession = await connectHttp(ahmaHttp);
const floorHttpSession = await connectHttp(floorHttp);
const ahmaStdio = await stdioClient(process.execPath, ahmaArgs('stdio'));
const floorStdio = await stdioClient(process.execPath, [everything, 'stdio']);
// pid: the server process whose CPU time is counted for the method.
const methods = {
  'ahma, Streamable HTTP': {
    client: ahmaHttpSession.client,
    call: AHMA_CALL,
    expect: 'hi',
    pid: ahmaHttp.child.pid,
  },
  'ahma, stdio': { client: ahmaStdio, call: AHMA_CALL, expect: 'hi', pid: ahmaStdio.transport.pid },
  'floor (server-everything echo), Streamable HTTP': {
    client: floorHttpSession.client,
    call: FLOOR_CALL,
    expect: 'Echo: hi',
    pid: floorHttp.child.pid,
  },
  'floor (server-everything echo), stdio': {
    client: floorStdio,
    call: FLOOR_CALL,
    expect: 'Echo: hi',
    pid: floorStdio.transport.pid,
  },
};
const roundTrip = Object.fromEntries(Object.keys(methods).map((name) => [name, []]));
// CPU time spent during each method's chunks: this process (the client) and the server's node
// process (its own threads; the sandbox's processes are not in it). /proc ticks are 10 ms, so
// these are good to ~0.05 ms per call over 300 calls.
const clientCpu = Object.fromEntries(Object.keys(methods).map((name) => [name, 0]));
const serverCpu = Object.fromEntries(Object.keys(methods).map((name) => [name, 0]));
for (const m of Object.values(methods))
  for (let i = 0; i < 50; i++) await callOnce(m.client, m.call, m.expect);
for (let done = 0; done < N; done += CHUNK) {
  for (const [name, m] of Object.entries(methods)) {
    const client0 = process.cpuUsage();
    const server0 = stat(m.pid).cpuMs;
    for (let i = 0; i < CHUNK && done + i < N; i++)
      roundTrip[name].push(await callOnce(m.client, m.call, m.expect));
    const client = process.cpuUsage(client0);
    clientCpu[name] += (client.user + client.system) / 1000;
    serverCpu[name] += stat(m.pid).cpuMs - server0;
  }
}
const trip = Object.fromEntries(
  Object.entries(roundTrip).map(([name, xs]) => [
    name,
    {
      ...summarize(xs),
      clientCpu: clientCpu[name] / xs.length,
      serverCpu: serverCpu[name] / xs.length,
    },
  ]),
);
await ahmaStdio.close();
await floorStdio.close();
await endSession(ahmaHttpSession);
await endSession(floorHttpSession);

// ---------------------------------------------------------------- 2. session start

const SKIPPED = 'skipped: --session-isolation not available';
const startTargets = {
  'ahma, Streamable HTTP': { url: ahmaHttp.url, headers: ahmaHttp.headers, minTools: 24 },
  'floor (server-everything echo), Streamable HTTP': {
    url: floorHttp.url,
    headers: floorHttp.headers,
    minTools: 1,
  },
};
let isolationNote;
if (ISOLATION) {
  // A session's root must lie within --allowed-roots (default: the server's scope, which the
  // sessions' directories are not in). A build with isolation but before --allowed-roots refuses
  // the flag: it gets another start without it.
  let isolated = await startAhmaHttp(['--session-isolation', '--allowed-roots', sessionsDir]);
  if (isolated.refused !== undefined && /allowed-roots/.test(isolated.refused.stderr))
    isolated = await startAhmaHttp(['--session-isolation']);
  if (isolated.refused !== undefined) {
    const said = isolated.refused.stderr.trim().split('\n')[0];
    isolationNote = `${SKIPPED} (the server exited ${isolated.refused.code}: ${said})`;
  } else {
    startTargets['ahma --session-isolation, Streamable HTTP'] = {
      url: isolated.url,
      headers: isolated.headers,
      minTools: 5, // the built-in tools, should a session's scope not bring its tool files
      roots: true,
      child: isolated.child,
    };
  }
}
const starts = Object.fromEntries(
  Object.keys(startTargets).map((name) => [
    name,
    { total: [], connect: [], list: [], sdkList: [] },
  ]),
);
/**
 * One session start: connect (initialize + initialized), then the first tools/list, sent as a
 * plain request (the SDK's result schema parses it). Client.listTools() would also compile a
 * validator for every tool's output schema on the client before returning (tens of ms for ahma's
 * tools on this machine), which is the client's cost, not the server's: it is timed on its own
 * after the first answer, on the same session.
 */
async function sessionStart(target, into) {
  const session = httpClient(target, { roots: target.roots === true });
  const begun = performance.now();
  await session.client.connect(session.transport);
  const connected = performance.now();
  const { tools: listed } = await session.client.request(
    { method: 'tools/list', params: {} },
    ListToolsResultSchema,
  );
  const answered = performance.now();
  if (listed.length < target.minTools)
    throw new Error(`expected ${target.minTools}+ tools, got ${listed.length}`);
  const sdkBegun = performance.now();
  await session.client.listTools();
  const sdkMs = performance.now() - sdkBegun;
  await endSession(session);
  if (into !== undefined) {
    into.total.push(answered - begun);
    into.connect.push(connected - begun);
    into.list.push(answered - connected);
    into.sdkList.push(sdkMs);
    into.tools = listed.length;
  }
}
/**
 * A stdio cold start: spawn + initialize + tools/list, as bench/mcp.mjs measures it but with
 * tools/list a plain request like the HTTP session starts' (mcp.mjs's includes listTools()'s
 * validator compilation).
 */
let coldTools;
async function coldStart() {
  const begun = performance.now();
  const client = await stdioClient(process.execPath, ahmaArgs('stdio'));
  const { tools: listed } = await client.request(
    { method: 'tools/list', params: {} },
    ListToolsResultSchema,
  );
  const elapsed = performance.now() - begun;
  if (listed.length < 24) throw new Error(`expected 24+ tools, got ${listed.length}`);
  coldTools = listed.length;
  await client.close();
  return elapsed;
}
for (const target of Object.values(startTargets))
  for (let i = 0; i < 5; i++) await sessionStart(target);
const cold = [];
for (let done = 0; done < Math.max(STARTS, COLD * CHUNK); done += CHUNK) {
  for (const [name, target] of Object.entries(startTargets)) {
    for (let i = 0; i < CHUNK && done + i < STARTS; i++) await sessionStart(target, starts[name]);
  }
  if (cold.length < COLD) cold.push(await coldStart());
}
for (const target of Object.values(startTargets)) if (target.child) await stopProcess(target.child);
await stopProcess(ahmaHttp.child);
await stopProcess(floorHttp.child);

// ---------------------------------------------------------------- 3. load

const loadServer = await startAhmaHttp();
if (loadServer.refused !== undefined)
  throw new Error(`ahma-shell --mode http did not start: ${JSON.stringify(loadServer.refused)}`);
const pid = loadServer.child.pid;
await sleep(1000); // the pool's template and units are up
const memAtStart = memory(pid);
{
  // Warm-up: one session, 200 calls, ended; the server then has every path compiled once.
  const session = await connectHttp(loadServer);
  for (let i = 0; i < 200; i++) await callOnce(session.client, AHMA_CALL, 'hi');
  await endSession(session);
  await sleep(500);
}
const rounds = [];
for (let round = 1; round <= ROUNDS; round++) {
  const before = memory(pid);
  const opening = performance.now();
  const sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const session = httpClient(loadServer);
      await session.client.connect(session.transport);
      await session.client.request({ method: 'tools/list', params: {} }, ListToolsResultSchema);
      return session;
    }),
  );
  const openMs = performance.now() - opening;
  await sleep(300);
  const connected = memory(pid);

  let peakRss = connected.rss;
  let peakTreeRss = connected.treeRss;
  let peakProcesses = connected.processes;
  const sampler = setInterval(() => {
    const now = memory(pid, { withPss: false });
    peakRss = Math.max(peakRss, now.rss);
    peakTreeRss = Math.max(peakTreeRss, now.treeRss);
    peakProcesses = Math.max(peakProcesses, now.processes);
  }, SAMPLE_EVERY_MS);
  const latencies = [];
  const finished = [];
  const errors = [];
  const cpuBefore = stat(pid).cpuMs;
  const sandboxBefore = sandboxCpuMs(pid);
  const clientBefore = process.cpuUsage();
  const begun = performance.now();
  await Promise.all(
    sessions.map(async ({ client }) => {
      for (let i = 0; i < PER_SESSION; i++) {
        try {
          latencies.push(await callOnce(client, AHMA_CALL, 'hi'));
        } catch (error) {
          errors.push(String(error?.message ?? error));
        }
      }
      finished.push(performance.now() - begun);
    }),
  );
  const wallMs = performance.now() - begun;
  const cpuMs = stat(pid).cpuMs - cpuBefore;
  const sandboxMs = sandboxCpuMs(pid) - sandboxBefore;
  const clientUsage = process.cpuUsage(clientBefore);
  const clientMs = (clientUsage.user + clientUsage.system) / 1000;
  clearInterval(sampler);
  const after = memory(pid);
  peakRss = Math.max(peakRss, after.rss);
  peakTreeRss = Math.max(peakTreeRss, after.treeRss);
  await Promise.all(sessions.map(endSession));
  await sleep(2000);
  const ended = memory(pid);
  rounds.push({
    round,
    openMs,
    wallMs,
    commands: latencies.length,
    errors,
    perSecond: latencies.length / (wallMs / 1000),
    latency: summarize(latencies),
    cpuPerCommand: cpuMs / (latencies.length + errors.length),
    sandboxCpuPerCommand: sandboxMs / (latencies.length + errors.length),
    clientCpuPerCommand: clientMs / (latencies.length + errors.length),
    finishedFirst: Math.min(...finished),
    finishedLast: Math.max(...finished),
    before,
    connected,
    peak: { rss: peakRss, treeRss: peakTreeRss, processes: peakProcesses },
    after,
    ended,
  });
}
const hwm = Math.round(((status(pid)?.hwm ?? 0) / 1024) * 10) / 10;
await stopProcess(loadServer.child);
rmSync(root, { recursive: true, force: true });

// ---------------------------------------------------------------- report

const round2 = (x) => Math.round(x * 100) / 100;
const round1 = (x) => Math.round(x * 10) / 10;
const p = (name, q = 'p50') => trip[name][q];
const H = 'ahma, Streamable HTTP';
const S = 'ahma, stdio';
const FH = 'floor (server-everything echo), Streamable HTTP';
const FS = 'floor (server-everything echo), stdio';
const ratios = {
  'ahma HTTP / ahma stdio (p50)': round2(p(H) / p(S)),
  'ahma HTTP / ahma stdio (p90)': round2(p(H, 'p90') / p(S, 'p90')),
  'ahma HTTP / floor HTTP (p50)': round2(p(H) / p(FH)),
  'ahma HTTP / floor HTTP (p90)': round2(p(H, 'p90') / p(FH, 'p90')),
  'floor HTTP / floor stdio (p50)': round2(p(FH) / p(FS)),
  'HTTP − stdio, ahma (p50 ms)': round2(p(H) - p(S)),
  'HTTP − stdio, floor (p50 ms)': round2(p(FH) - p(FS)),
};

const lines = [
  `# HTTP benchmark — node ${process.version}, ${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the end`,
  '',
  `## 1. Round trip, one session each, ${N} sequential calls per method (round-robin, chunks of ${CHUNK})`,
  '',
  '| method | p50 ms | p90 ms | p99 ms | client CPU ms/call | server CPU ms/call |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...Object.entries(trip).map(
    ([name, s]) =>
      `| ${name} | ${s.p50} | ${s.p90} | ${s.p99} | ${round2(s.clientCpu)} | ${round2(s.serverCpu)} |`,
  ),
  '',
  '| ratio | value |',
  '| --- | ---: |',
  ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value} |`),
  '',
  `## 2. Session start over HTTP: connect (initialize + initialized) → first tools/list answered, ${STARTS} sessions per server`,
  '',
  '| server | tools | p50 ms | p90 ms | p99 ms | connect p50 ms | tools/list p50 ms | then SDK listTools() p50 ms |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...Object.entries(starts).map(([name, s]) => {
    const total = summarize(s.total);
    return `| ${name} | ${s.tools} | ${total.p50} | ${total.p90} | ${total.p99} | ${summarize(s.connect).p50} | ${summarize(s.list).p50} | ${summarize(s.sdkList).p50} |`;
  }),
  ...(ISOLATION
    ? isolationNote === undefined
      ? []
      : [`| ahma --session-isolation, Streamable HTTP | | ${isolationNote} | | | | | |`]
    : []),
  `| ahma, stdio cold start (spawn + initialize + tools/list), ${cold.length} of them | ${coldTools} | ${summarize(cold).p50} | ${summarize(cold).p90} | ${summarize(cold).p99} | | | |`,
  '',
  `ahma session start / floor session start (p50): ${round2(
    summarize(starts[H].total).p50 / summarize(starts[FH].total).p50,
  )}; stdio cold start / HTTP session start (p50): ${round2(summarize(cold).p50 / summarize(starts[H].total).p50)}`,
  ...(ISOLATION ? [] : ['(--isolation not given: no --session-isolation row)']),
  '',
  `## 3. Load: ${SESSIONS} sessions × ${PER_SESSION} sandboxed \`echo hi\`, all sessions at once, one call at a time each (server defaults: at most 100 sessions, 30 min idle timeout)`,
  '',
  '| round | open sessions ms | wall s | commands/s | p50 ms | p90 ms | p99 ms | CPU ms/command: server (node) | sandbox tree | client | first … last session done, s | errors |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |',
  ...rounds.map(
    (r) =>
      `| ${r.round} | ${Math.round(r.openMs)} | ${round2(r.wallMs / 1000)} | ${Math.round(r.perSecond)} | ${r.latency.p50} | ${r.latency.p90} | ${r.latency.p99} | ${round2(r.cpuPerCommand)} | ${round2(r.sandboxCpuPerCommand)} | ${round2(r.clientCpuPerCommand)} | ${round2(r.finishedFirst / 1000)} … ${round2(r.finishedLast / 1000)} | ${r.errors.length} |`,
  ),
  ...rounds.flatMap((r) =>
    r.errors.length === 0 ? [] : [`round ${r.round}, first error: ${r.errors[0]}`],
  ),
  '',
  `Server memory, MiB: node = VmRSS of the ahma-shell process; tree = summed over it and its descendants (sandbox zygote, template bash, units), RSS and Pss; at start = ${round1(memAtStart.rss)} node, ${memAtStart.treeRss} tree RSS, ${memAtStart.treePss} tree Pss, ${memAtStart.processes} processes (before any session); node VmHWM at the end ${hwm}`,
  '',
  '| round | point | node RSS | tree RSS | tree Pss | processes |',
  '| ---: | --- | ---: | ---: | ---: | ---: |',
  ...rounds.flatMap((r) =>
    [
      ['before (no session)', r.before],
      [`${SESSIONS} sessions connected, idle`, r.connected],
      [`peak during the load (every ${SAMPLE_EVERY_MS} ms)`, r.peak],
      ['after the load, sessions open', r.after],
      ['2 s after every session ended (DELETE)', r.ended],
    ].map(
      ([point, m]) =>
        `| ${r.round} | ${point} | ${m.rss} | ${m.treeRss} | ${m.treePss ?? ''} | ${m.processes} |`,
    ),
  ),
  '',
  '| round | per session, connected − before (node RSS) | per session, peak − before (node RSS) | per session, peak − before (tree RSS) | ended − before (node RSS) |',
  '| ---: | ---: | ---: | ---: | ---: |',
  ...rounds.map(
    (r) =>
      `| ${r.round} | ${round2((r.connected.rss - r.before.rss) / SESSIONS)} | ${round2((r.peak.rss - r.before.rss) / SESSIONS)} | ${round2((r.peak.treeRss - r.before.treeRss) / SESSIONS)} | ${round1(r.ended.rss - r.before.rss)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
