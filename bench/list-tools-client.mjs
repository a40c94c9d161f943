#!/usr/bin/env node
// What tools/list costs the client (issue 28, gap 11). The SDK v1 client builds a validator for
// every listed tool's outputSchema at every listing, and reuses one only for a schema whose `$id`
// its Ajv already knows. Each checkout's `ahma-shell --mode stdio` is listed by the SDK v1 client
// (the 2025 eras), and for reference by the v2 client pinned to 2026-07-28, with the default tool
// set and with `--tools git,file-tools`.
//
//   pnpm build && node bench/list-tools-client.mjs [CHECKOUT …] [--n 40] [--firsts 5]
//
// CHECKOUT: a built checkout (default: this one), e.g. the tree before a change:
// `git worktree add /tmp/before REV && (cd /tmp/before && pnpm install --offline && pnpm build)`.
// Reported per kind (checkout, tool set, client):
//   first     the v1 client's first listTools() after initialize: it builds every validator then.
//             --firsts rounds, each a new server and client per kind, interleaved over the kinds;
//             the median. Not for v2: pinned to 2026-07-28 it sends nothing before its first
//             request, so its first listing also waits for the server's start.
//   median    --n more listings on one client per kind, round-robin over every kind so all share
//             the machine's noise (median and p90).
//   and what the listing holds: tools, distinct output schemas, distinct `$id`s.
//
// Every server gets TMPDIR and its private state in the benchmark's own directory (under
// /var/tmp): Ahma refuses to start when its code lies where sandboxed commands can write, which
// the temp directory is, so a checkout under /tmp would not start otherwise.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { numberOption } from './args.mjs';
import { roundRobin, summarize } from './stats.mjs';

const args = process.argv.slice(2);
const N = numberOption('n', 40);
const FIRSTS = numberOption('firsts', 5);
const positional = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
const here = fileURLToPath(new URL('..', import.meta.url));
const checkouts = (positional.length > 0 ? positional : [here]).map((dir) => resolve(dir));
const TOOL_SETS = { default: [], 'git,file-tools': ['--tools', 'git,file-tools'] };
const CLIENTS = ['v1', 'v2'];
const KINDS = checkouts.flatMap((checkout) =>
  Object.entries(TOOL_SETS).flatMap(([toolSet, toolArgs]) =>
    CLIENTS.map((client) => ({
      name: `${checkout} | ${toolSet} | ${client}`,
      checkout,
      toolArgs,
      client,
    })),
  ),
);

const root = mkdtempSync('/var/tmp/ahma-list-tools-bench-');
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
const scope = join(root, 'scope');
const tmp = join(root, 'tmp');
mkdirSync(scope);
mkdirSync(tmp);
let servers = 0;
const env = () => {
  const own = join(root, `server-${String(servers++)}`);
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('AHMA_'))),
    TMPDIR: tmp,
    XDG_CACHE_HOME: join(own, 'cache'),
    XDG_STATE_HOME: join(own, 'state'),
  };
};

/** A client of `kind` on a new server of its checkout and tool set, connected. */
async function connect({ checkout, toolArgs, client }) {
  const bin = join(checkout, 'packages', 'shell-server', 'bin', 'ahma-shell.js');
  const spawnWith = {
    command: process.execPath,
    args: [bin, '--mode', 'stdio', '--sandbox-scope', scope, '--no-hot-reload', ...toolArgs],
    env: env(),
    cwd: scope,
    stderr: 'ignore',
  };
  if (client === 'v1') {
    const connected = new Client({ name: 'list-tools-bench', version: '1.0.0' });
    await connected.connect(new StdioClientTransport(spawnWith));
    return connected;
  }
  const connected = new ModernClient(
    { name: 'list-tools-bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await connected.connect(new ModernStdio(spawnWith));
  return connected;
}

/** The time of one listTools() and what it listed. */
async function timedList(client) {
  const started = performance.now();
  const { tools } = await client.listTools();
  return { ms: performance.now() - started, tools };
}

// The bench process's own first listing (loading the clients' validator code) is no kind's.
for (const client of CLIENTS) {
  const warm = await connect({ checkout: checkouts[0], toolArgs: [], client });
  await warm.listTools();
  await warm.close();
}

const firsts = Object.fromEntries(KINDS.map(({ name }) => [name, []]));
for (let round = 0; round < FIRSTS; round++) {
  for (const kind of KINDS.filter(({ client }) => client === 'v1')) {
    const client = await connect(kind);
    firsts[kind.name].push((await timedList(client)).ms);
    await client.close();
  }
}

const listing = {};
const kinds = {};
const clients = [];
for (const kind of KINDS) {
  const client = await connect(kind);
  clients.push(client);
  const { tools } = await timedList(client);
  const schemas = tools.flatMap((tool) => (tool.outputSchema ? [tool.outputSchema] : []));
  listing[kind.name] = {
    tools: tools.length,
    distinct: new Set(schemas.map((schema) => JSON.stringify(schema))).size,
    ids: new Set(schemas.flatMap((schema) => (schema.$id ? [schema.$id] : []))).size,
  };
  kinds[kind.name] = () => client.listTools();
}
const times = await roundRobin(kinds, N, 0);
await Promise.all(clients.map((client) => client.close()));

const lines = [
  `# tools/list in the client — node ${process.version}; first: median of ${String(FIRSTS)} new v1 clients; then ${String(N)} listings per kind, round-robin`,
  '',
  '| checkout | tool set | client | tools | distinct output schemas | $ids | first ms | median ms | p90 ms |',
  '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...KINDS.map(({ name }) => {
    const s = summarize(times[name]);
    const l = listing[name];
    const first = firsts[name].length > 0 ? summarize(firsts[name]).p50.toFixed(1) : '—';
    return `| ${name} | ${String(l.tools)} | ${String(l.distinct)} | ${String(l.ids)} | ${first} | ${s.p50.toFixed(2)} | ${s.p90.toFixed(2)} |`;
  }),
];
process.stdout.write(`${lines.join('\n')}\n`);
