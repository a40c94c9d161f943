#!/usr/bin/env node
// What an isolated HTTP session's start would still cost with a warm spare process (issue 31,
// item 4): a process whose code is already loaded, given its scope when the client's roots arrive.
// Each sample is a fresh Node process that loads the built server (what a spare would have done
// ahead), then times what must follow the roots: the runtime on that scope (sandbox, Landlock
// probe, install check, tools), the MCP connection, initialize and the first tools/list answered,
// in-process. The load is timed too, for the share a spare would take away.
//
//   pnpm build && node bench/spare-start.mjs [--n 20]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { numberOption } from './args.mjs';
import { summarize } from './stats.mjs';

const N = numberOption('n', 20);
const SERVER = new URL('../packages/shell-server/dist/index.js', import.meta.url);

if (process.argv[2] === '--sample') {
  const scope = process.argv[3];
  const startedLoad = performance.now();
  const server = await import(SERVER.href);
  const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
  const makeRuntime = async (dir) => {
    const parsed = server.parseCommandLine(
      ['--mode', 'stdio', '--sandbox-scope', dir],
      process.env,
    );
    const logger = await server.createLogger({
      logToStderr: false,
      debug: false,
      env: process.env,
    });
    return server.createRuntime({ options: parsed.options, env: process.env, cwd: dir, logger });
  };
  // A spare that has also made (and closed) a runtime of its own ahead: its JIT warm, the
  // Landlock probe and the package closure known.
  if (process.argv[4] === '--warm') await (await makeRuntime(process.argv[5])).close();
  const loaded = performance.now();
  // The roots arrive: from here on, what a spare would do.
  const runtime = await makeRuntime(scope);
  const connection = server.createMcpServer(runtime);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await connection.server.connect(serverSide);
  // Raw JSON-RPC, not the SDK's Client: its own work (it compiles every tool's output schema) is
  // the client's, on the other side of the HTTP connection.
  const answers = new Map();
  clientSide.onmessage = (message) => answers.get(message.id)?.(message);
  await clientSide.start();
  const request = (id, method, params) =>
    new Promise((resolve) => {
      answers.set(id, resolve);
      void clientSide.send({ jsonrpc: '2.0', id, method, params });
    });
  await request(1, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'spare-bench', version: '1' },
  });
  await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const listed = await request(2, 'tools/list', {});
  const served = performance.now();
  if (!(listed.result?.tools?.length > 0))
    throw new Error(`no tools listed: ${JSON.stringify(listed)}`);
  await clientSide.close();
  await runtime.close();
  process.stdout.write(JSON.stringify({ load: loaded - startedLoad, serve: served - loaded }));
  process.exit(0);
}

const root = mkdtempSync('/var/tmp/ahma-spare-bench-');
const env = {
  ...process.env,
  XDG_CACHE_HOME: join(root, 'cache'),
  XDG_STATE_HOME: join(root, 'state'),
};
const samples = { cold: { load: [], serve: [] }, warm: { load: [], serve: [] } };
try {
  for (let index = 0; index < N; index++) {
    for (const kind of ['cold', 'warm']) {
      // A scope of its own each, as each session has its client's root.
      const scope = join(root, `${kind}-${String(index)}`);
      const ahead = join(root, `${kind}-${String(index)}-ahead`);
      mkdirSync(scope);
      mkdirSync(ahead);
      const warm = kind === 'warm' ? ['--warm', ahead] : [];
      const child = spawnSync(
        process.execPath,
        [fileURLToPath(import.meta.url), '--sample', scope, ...warm],
        { cwd: scope, env, encoding: 'utf8' },
      );
      if (child.status !== 0) throw new Error(`sample failed: ${child.stderr}`);
      const sample = JSON.parse(child.stdout);
      samples[kind].load.push(sample.load);
      samples[kind].serve.push(sample.serve);
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const rows = [
  ['loading the server (a spare does it ahead)', summarize(samples.cold.load)],
  ['after the roots: runtime, connection, initialize, tools/list', summarize(samples.cold.serve)],
  ['the same in a spare that made a runtime ahead', summarize(samples.warm.serve)],
];
process.stdout.write(
  [
    `# A warm spare's share of an isolated session's start — node ${process.version}, ${String(N)} processes`,
    '',
    '| part | p50 ms | p90 ms |',
    '| --- | ---: | ---: |',
    ...rows.map(([name, s]) => `| ${name} | ${s.p50} | ${s.p90} |`),
    '',
  ].join('\n'),
);
