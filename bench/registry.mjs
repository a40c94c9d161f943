#!/usr/bin/env node
// Command registry benchmark (issue 14, SPEC §8): what registering, persisting and running commands
// costs through ahma-shell --registry over stdio, the sandbox on (the default), in a temp scope.
//
//   pnpm build && node bench/registry.mjs [--n 200] [--runs 30] [--levels 10,100,1000]
//                                         [--execs 1000] [--exec-rounds 5] [--warmup 50]
//                                         [--file-commands 1000] [--shell-baseline]
//
// 1. add_command: --n adds with unique names of a small script in the scope, one after another
//    on a fresh server (its registry grows from 0 to --n); p50, p95, max. NFR1.1: < 100 ms
//    (target p50 < 5 ms).
// 2. Persist (NFR1.2: < 50 ms): --n update_command calls that change only a description (no
//    executable check: the change is the lock, the file written atomically — temp file, fsync,
//    rename, directory fsync — and the tool list rebuilt), on the same server with --n commands.
//    Then in this process, core's Registry alone on a file of --file-commands commands:
//    `registry.change((d) => d.update({name, description}))`, --n times.
// 3. Scale (NFR1.3): a fresh server brought to each of --levels registered commands with one
//    batch_exec (non-atomic); then --runs tools/list back to back (a plain request:
//    `client.request({method: 'tools/list'}, ListToolsResultSchema)`, since the SDK's
//    `listTools()` also compiles every tool's output schema on the client), with the CPU time
//    the server process and this one spend per list; then --runs add_command, each followed by
//    an untimed remove_command of that command (so the count stays at the level); p50 of each.
// 4. Executions: a fresh server with one registered command (a script echoing its argument,
//    synchronous); --warmup untimed calls, then --exec-rounds rounds of --execs timed ones; VmRSS
//    of the server's node process at start, after the warm-up ("before") and after each round
//    (after the first: "after"), and its VmHWM. The later rounds show whether growth continues.
//    --shell-baseline: the same on another fresh server with sandboxed_shell {"command": "echo
//    hiN"}, to tell what the registered tool adds to what every command call costs.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { numberOption, option } from './args.mjs';

const N = numberOption('n', 200);
const RUNS = numberOption('runs', 30);
const LEVELS = option('levels', '10,100,1000').split(',').map(Number);
const EXECS = numberOption('execs', 1000);
const EXEC_ROUNDS = numberOption('exec-rounds', 5);
const SHELL_BASELINE = process.argv.includes('--shell-baseline');
const WARMUP = numberOption('warmup', 50);
const FILE_COMMANDS = numberOption('file-commands', 1000);

const here = dirname(fileURLToPath(import.meta.url));
const ahmaBin = join(here, '..', 'packages', 'shell-server', 'bin', 'ahma-shell.js');
const { Registry } = await import(join(here, '..', 'packages', 'core', 'dist', 'index.js'));

const root = mkdtempSync('/var/tmp/ahma-registry-bench-');
const env = { ...process.env, XDG_CACHE_HOME: join(root, 'cache') };

/** A scope directory with the script every registered command runs: it echoes its argument. */
function makeScope(name) {
  const scope = join(root, name);
  mkdirSync(join(scope, 'bin'), { recursive: true });
  const script = join(scope, 'bin', 'echo-arg.sh');
  writeFileSync(script, '#!/bin/sh\nprintf "%s\\n" "$1"\n');
  chmodSync(script, 0o755);
  return scope;
}
const EXEC = './bin/echo-arg.sh';
const ARGS = { text: { type: 'string', description: 'What to echo' } };

async function connect(scope) {
  const client = new Client({ name: 'ahma-registry-bench', version: '1' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ahmaBin, '--mode', 'stdio', '--registry', '--sandbox-scope', scope],
    cwd: scope,
    env,
    stderr: 'ignore',
  });
  await client.connect(transport);
  return { client, pid: transport.pid };
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result;
}
async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
const listTools = (client) => client.request({ method: 'tools/list' }, ListToolsResultSchema);

/** p50, p95 and max of a list of timings, ms (nearest rank, as bench/stats.mjs). */
function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  return { p50: round(at(0.5)), p95: round(at(0.95)), max: round(sorted.at(-1)) };
}
const round = (x) => Math.round(x * 1000) / 1000;

/** CPU time of a process so far (utime + stime), ms; clock ticks of 10 ms. */
function cpuMs(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** VmRSS and VmHWM of a process, MiB. */
function memory(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1]) / 1024;
  return { rss: round(field('VmRSS')), hwm: round(field('VmHWM')) };
}

// 1 and 2: add_command, then description-only update_command, on one server.
const basics = {};
let firstAdd;
{
  const scope = makeScope('basic');
  const { client } = await connect(scope);
  const adds = [];
  for (let i = 0; i < N; i++) {
    adds.push(
      await timed(() =>
        call(client, 'add_command', {
          name: `cmd_${i}`,
          exec: EXEC,
          description: `Benchmark command ${i}`,
          args: ARGS,
        }),
      ),
    );
  }
  basics[`add_command (registry 0 → ${N})`] = percentiles(adds);
  firstAdd = round(adds[0]);
  const updates = [];
  for (let i = 0; i < N; i++) {
    updates.push(
      await timed(() =>
        call(client, 'update_command', {
          name: `cmd_${i % N}`,
          description: `Benchmark command ${i}, updated`,
        }),
      ),
    );
  }
  basics[`update_command, description only (${N} registered)`] = percentiles(updates);
  await client.close();
}

// 2, in this process: core's Registry alone on a file of FILE_COMMANDS commands.
{
  const scope = makeScope('in-process');
  const file = join(scope, '.ahma', 'registry.json');
  const registry = await Registry.open({
    file,
    writable: [scope],
    lookup: { scope, path: process.env.PATH },
    nameTaken: () => undefined,
  });
  await registry.change(async (draft) => {
    for (let i = 0; i < FILE_COMMANDS; i++) {
      await draft.add({
        name: `cmd_${i}`,
        exec: EXEC,
        description: `Benchmark command ${i}`,
        args: ARGS,
      });
    }
  });
  const kib = Math.round(readFileSync(file).length / 1024);
  const writes = [];
  for (let i = 0; i < N; i++) {
    writes.push(
      await timed(() =>
        registry.change((draft) =>
          draft.update({ name: `cmd_${i % FILE_COMMANDS}`, description: `Updated ${i}` }),
        ),
      ),
    );
  }
  basics[`Registry.change(update) in-process (${FILE_COMMANDS} commands, ${kib} KiB file)`] =
    percentiles(writes);
}

// 3: tools/list and add_command at each level.
const scale = [];
{
  const scope = makeScope('scale');
  const { client, pid } = await connect(scope);
  let registered = 0;
  for (const level of LEVELS) {
    const commands = [];
    for (; registered < level; registered++) {
      commands.push({
        operation: 'add_command',
        params: {
          name: `cmd_${registered}`,
          exec: EXEC,
          description: `Benchmark command ${registered}`,
          args: ARGS,
        },
      });
    }
    for (let from = 0; from < commands.length; from += 1000) {
      await call(client, 'batch_exec', {
        commands: commands.slice(from, from + 1000),
        atomic: false,
      });
    }
    const { tools } = await listTools(client);
    for (let i = 0; i < 5; i++) await listTools(client);
    // tools/list back to back, with the CPU time each side spends on them.
    const lists = [];
    const server0 = cpuMs(pid);
    const client0 = process.cpuUsage();
    for (let i = 0; i < RUNS; i++) lists.push(await timed(() => listTools(client)));
    const clientUsage = process.cpuUsage(client0);
    const serverCpu = cpuMs(pid) - server0;
    // add_command, each followed by an untimed remove_command: the count stays at the level.
    const adds = [];
    for (let i = 0; i < RUNS; i++) {
      const name = `probe_${level}_${i}`;
      adds.push(
        await timed(() =>
          call(client, 'add_command', { name, exec: EXEC, description: 'Probe', args: ARGS }),
        ),
      );
      await call(client, 'remove_command', { name });
    }
    scale.push({
      level,
      serverCpu: round(serverCpu / RUNS),
      clientCpu: round((clientUsage.user + clientUsage.system) / 1000 / RUNS),
      tools: tools.length,
      kib: Math.round(JSON.stringify({ tools }).length / 1024),
      list: percentiles(lists),
      add: percentiles(adds),
    });
  }
  await client.close();
}

// 4: EXECS executions of one registered command, with the server's RSS; with --shell-baseline,
// the same on another fresh server with sandboxed_shell, to tell the registered tool's share.
async function executions(tool) {
  const scope = makeScope(`exec-${tool}`);
  const { client, pid } = await connect(scope);
  await call(client, 'add_command', {
    name: 'echo_arg',
    exec: EXEC,
    description: 'Echo the text',
    args: { text: { type: 'string', required: true } },
  });
  const request =
    tool === 'registered'
      ? (i) => ({ name: 'echo_arg', args: { text: `hi${i}` } })
      : (i) => ({ name: 'sandboxed_shell', args: { command: `echo hi${i}` } });
  const run = async (i) => {
    const { name, args } = request(i);
    const result = await call(client, name, args);
    const text = result.content.map((part) => part.text ?? '').join('');
    if (!text.includes(`hi${i}`)) throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  };
  const start = memory(pid);
  for (let i = 0; i < WARMUP; i++) await run(i);
  await sleep(500);
  const before = memory(pid);
  const rounds = [];
  for (let round = 0; round < EXEC_ROUNDS; round++) {
    const samples = [];
    for (let i = 0; i < EXECS; i++) samples.push(await timed(() => run(i)));
    await sleep(500); // let the last call's operation settle before reading
    rounds.push({ latency: percentiles(samples), memory: memory(pid) });
  }
  await client.close();
  return { start, before, rounds };
}
const runs = { 'registered echo_arg': await executions('registered') };
if (SHELL_BASELINE) runs['sandboxed_shell "echo …"'] = await executions('shell');
rmSync(root, { recursive: true, force: true });

const lines = [
  `# Command registry — node ${process.version}, ${N} adds/updates, ${RUNS} runs per level, ${EXECS} executions`,
  '',
  '| what | p50 ms | p95 ms | max ms |',
  '| --- | ---: | ---: | ---: |',
  ...Object.entries(basics).map(([name, s]) => `| ${name} | ${s.p50} | ${s.p95} | ${s.max} |`),
  '',
  '| registered commands | tools listed | tools/list KiB | tools/list p50 ms | p95 ms | CPU ms per list: server | client | add_command p50 ms | p95 ms |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...scale.map(
    (s) =>
      `| ${s.level} | ${s.tools} | ${s.kib} | ${s.list.p50} | ${s.list.p95} | ${s.serverCpu} | ${s.clientCpu} | ${s.add.p50} | ${s.add.p95} |`,
  ),
  '',
  `the first add_command (the server's first call of it) took ${firstAdd} ms`,
  '',
  `executions of a registered command (sync, echoes its argument), ${EXEC_ROUNDS} rounds of ${EXECS} after ${WARMUP} warm-up calls, a fresh server each:`,
  '',
  '| tool | point | calls p50 ms | p95 ms | max ms | server VmRSS MiB | VmHWM MiB |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ...Object.entries(runs).flatMap(([tool, run]) => [
    `| ${tool} | at start (1 command registered, no call) | | | | ${run.start.rss} | ${run.start.hwm} |`,
    `| ${tool} | before: after ${WARMUP} warm-up calls | | | | ${run.before.rss} | ${run.before.hwm} |`,
    ...run.rounds.map(
      (r, i) =>
        `| ${tool} | after round ${i + 1} (${(i + 1) * EXECS} calls) | ${r.latency.p50} | ${r.latency.p95} | ${r.latency.max} | ${r.memory.rss} | ${r.memory.hwm} |`,
    ),
  ]),
  '',
  ...Object.entries(runs).map(
    ([tool, run]) =>
      `${tool}: VmRSS growth over the first ${EXECS} calls (after − before) ${round(run.rounds[0].memory.rss - run.before.rss)} MiB` +
      run.rounds
        .slice(1)
        .map((r, i) => `, round ${i + 2} ${round(r.memory.rss - run.rounds[i].memory.rss)} MiB`)
        .join(''),
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
