#!/usr/bin/env node
// The CPU a call costs, process by process (issue 31, item 1): N sequential calls from the SDK's
// Client over stdio to this checkout's `ahma-shell --sync` (`sandboxed_shell echo hi`) and to the
// process-per-command floor (bench/fork-floor-server.mjs `run echo hi`, plain and `--supervised`),
// alternating in chunks of 10. The kernel's own accounting, read before and after the timed calls,
// gives each role's CPU per call: a live process's run time (/proc/PID/task/*/schedstat, in ns),
// and for the processes a call starts and ends, the time the kernel adds to their reaper when they
// are reaped (cutime + cstime of /proc/PID/stat, in clock ticks: exact over many calls, not per
// call). Roles:
//
//   client       this script (the SDK's Client), all its threads
//   server       the MCP server (ahma-shell, or the floor's node), all its threads
//   zygote       ahma: the sandbox helper's pool zygote itself
//   template     ahma: the template bash that clones the shell units
//   units        ahma: every unit's supervisor S and command B, and what B ran (reaped by the zygote)
//   warm bash    the floor: the bash that forks a subshell per call
//   subshells    the floor: what each call forked (reaped by the warm bash)
//
// On two cores the chain of a sequential call runs mostly on one: when the sum of the roles is
// near the wall time, every µs of CPU is a µs of latency.
//
//   pnpm build && node bench/chain-cpu.mjs [--n 1000]
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { numberOption } from './args.mjs';
import { summarize } from './stats.mjs';

const N = numberOption('n', 1000);
const WARM_UP = 300;
const CHUNK = 10;
const here = join(fileURLToPath(import.meta.url), '..', '..');
const ahmaBin = join(here, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
const forkFloor = join(here, 'bench', 'fork-floor-server.mjs');
const TICK_US = 1e6 / 100; // USER_HZ: /proc reports clock ticks of 10 ms on Linux

// Under /var/tmp: Ahma refuses to start when its code lies where commands can write.
const root = mkdtempSync('/var/tmp/ahma-chain-cpu-');
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
const tmp = join(root, 'tmp');
for (const dir of [scope, tmp]) mkdirSync(dir);

const servers = [
  {
    name: 'ahma (pool)',
    args: [ahmaBin, '--mode', 'stdio', '--sync'],
    call: { name: 'sandboxed_shell', arguments: { command: 'echo hi' } },
  },
  {
    name: 'fork floor',
    args: [forkFloor],
    call: { name: 'run', arguments: { command: 'echo hi' } },
  },
  {
    name: 'fork floor, supervised',
    args: [forkFloor, '--supervised'],
    call: { name: 'run', arguments: { command: 'echo hi' } },
  },
];
for (const server of servers) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: server.args,
    cwd: scope,
    env: { ...process.env, TMPDIR: tmp },
    stderr: 'ignore',
  });
  server.client = new Client({ name: 'chain-cpu', version: '1' });
  await server.client.connect(transport);
  server.pid = transport.pid;
  server.times = [];
}
const callOnce = (server) => server.client.callTool(server.call);
for (const server of servers) for (let i = 0; i < WARM_UP; i++) await callOnce(server);

// The processes of each chain, found once warm: the zygote or the warm bash is the server's child,
// the template the zygote's oldest bash child.
for (const server of servers) {
  const [child] = childrenOf(server.pid).filter(({ name }) => name !== 'node');
  server.parts = { client: [process.pid], server: [server.pid] };
  if (child?.name === 'ahma-sandbox') {
    server.parts.zygote = [child.pid];
    const [template] = childrenOf(child.pid)
      .filter(({ name, cmdline }) => name === 'bash' && cmdline.includes('enable -f'))
      .map(({ pid }) => pid);
    if (template !== undefined) server.parts.template = [template];
    server.reaper = { units: child.pid };
  } else if (child !== undefined) {
    server.parts['warm bash'] = [child.pid];
    server.reaper = { subshells: child.pid };
  }
}

// The client's own time is counted per server: only while that server's calls run.
const clientTime = new Map(servers.map((server) => [server, 0]));
const start = new Map(servers.map((server) => [server, snapshot(server)]));
for (let done = 0; done < N; done += CHUNK) {
  for (const server of servers) {
    const before = runTimeNs(process.pid);
    for (let i = 0; i < CHUNK; i++) {
      const started = process.hrtime.bigint();
      await callOnce(server);
      server.times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    clientTime.set(server, clientTime.get(server) + runTimeNs(process.pid) - before);
  }
}
const end = new Map(servers.map((server) => [server, snapshot(server)]));
for (const server of servers) await server.client.close();

const roles = ['client', 'server', 'zygote', 'template', 'units', 'warm bash', 'subshells'];
const columns = servers.map((server) => {
  const calls = server.times.length;
  const perCall = new Map();
  const first = start.get(server);
  const last = end.get(server);
  for (const role of roles) {
    if (role === 'client') perCall.set(role, clientTime.get(server) / 1e3 / calls);
    else if (role in first) perCall.set(role, (last[role] - first[role]) / calls);
  }
  const sum = [...perCall.values()].reduce((total, value) => total + value, 0);
  return { server, perCall, sum, p50: summarize(server.times).p50 * 1000 };
});
process.stdout.write(
  `# ${String(N)} sequential calls each (after ${String(WARM_UP)}), node ${process.version}: CPU µs per call, by role (means)\n\n`,
);
process.stdout.write(
  `| role | ${columns.map(({ server }) => server.name).join(' | ')} |\n| --- |${columns.map(() => ' ---: |').join('')}\n`,
);
for (const role of roles) {
  const cells = columns.map(({ perCall }) => perCall.get(role));
  if (cells.every((value) => value === undefined)) continue;
  process.stdout.write(
    `| ${role} | ${cells.map((value) => (value === undefined ? '' : value.toFixed(0))).join(' | ')} |\n`,
  );
}
process.stdout.write(
  `| **sum** | ${columns.map(({ sum }) => sum.toFixed(0)).join(' | ')} |\n` +
    `| wall p50 | ${columns.map(({ p50 }) => p50.toFixed(0)).join(' | ')} |\n`,
);

/** Each role's CPU so far in µs: live processes' run time, and what their reapers were given. */
function snapshot(server) {
  const taken = {};
  for (const [role, pids] of Object.entries(server.parts)) {
    if (role === 'client') continue;
    taken[role] = pids.reduce((total, pid) => total + runTimeNs(pid) / 1e3, 0);
  }
  for (const [role, pid] of Object.entries(server.reaper ?? {})) {
    const fields = statFields(pid);
    taken[role] = (Number(fields[13]) + Number(fields[14])) * TICK_US; // cutime, cstime
  }
  return taken;
}

/** A process's run time so far in ns: the sum over its threads, from schedstat. */
function runTimeNs(pid) {
  let total = 0;
  for (const task of readdirSync(`/proc/${String(pid)}/task`)) {
    try {
      total += Number(
        readFileSync(`/proc/${String(pid)}/task/${task}/schedstat`, 'utf8').split(' ')[0],
      );
    } catch {
      // a thread that ended meanwhile
    }
  }
  return total;
}

/** The fields of /proc/PID/stat after the name: [0] is the state, [1] the parent. */
function statFields(pid) {
  const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The children of a process: pid, name, command line. */
function childrenOf(parent) {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(statFields(Number(entry))[1]) !== parent) continue;
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      children.push({ pid: Number(entry), name, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return children.sort((a, b) => a.pid - b.pid);
}
