#!/usr/bin/env node
// How long an agent waits for the result of a quick asynchronous call (SPEC §3 delivery), by path:
//
//   inline   ahma-shell (default --inline-wait 5): the call's response carries the result
//   pushed   ahma-shell --inline-wait 0: the response says `started`, the result comes later as a
//            notifications/message (logger "ahma") naming the operation id
//
// Each sample is one `sandboxed_shell {"command": "echo hi"}` (async by default) from the call
// until the result is in the client's hands; the two servers alternate in chunks of 10.
//
//   pnpm build && node bench/delivery.mjs [--n 300]
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { summarize } from './stats.mjs';

const args = process.argv.slice(2);
const nAt = args.indexOf('--n');
const N = nAt >= 0 ? Number(args[nAt + 1]) : 300;
const bin = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'packages/shell-server/bin/ahma-shell.js',
);

const root = mkdtempSync('/var/tmp/ahma-delivery-');
const scope = join(root, 'scope');
mkdirSync(scope);

/** A connected client; a push resolves the waiter of its operation id, or is kept for it. */
async function connect(name, flags) {
  const client = new Client({ name: `ahma-delivery-${name}`, version: '1' });
  const waiters = new Map();
  const arrived = new Set();
  client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    const id = params.data?.operation_id;
    const waiter = waiters.get(id);
    if (waiter === undefined) arrived.add(id);
    else waiter();
    waiters.delete(id);
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bin, '--mode', 'stdio', '--sandbox-scope', scope, ...flags],
      cwd: scope,
      env: { ...process.env, XDG_CACHE_HOME: join(root, `cache-${name}`) },
      stderr: 'ignore',
    }),
  );
  return { name, client, waiters, arrived };
}

/** One call until its result is in hand: the response itself, or the push it announces. */
async function resultOf({ client, waiters, arrived }) {
  const result = await client.callTool({
    name: 'sandboxed_shell',
    arguments: { command: 'echo hi' },
  });
  const content = result.structuredContent;
  if (content?.status === 'started') {
    // The push may already have been handled (it can follow the response in the same read).
    if (!arrived.delete(content.operation_id)) {
      await new Promise((resolve) => waiters.set(content.operation_id, resolve));
    }
  } else if (content?.output !== 'hi\n') {
    throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  }
}

const servers = [await connect('inline', []), await connect('pushed', ['--inline-wait', '0'])];
const samples = Object.fromEntries(servers.map((server) => [server.name, []]));
for (const server of servers) for (let i = 0; i < 30; i++) await resultOf(server);
for (let done = 0; done < N; done += 10) {
  for (const server of servers) {
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await resultOf(server);
      samples[server.name].push(performance.now() - started);
    }
  }
}
for (const { client } of servers) await client.close();
rmSync(root, { recursive: true, force: true });

const inline = summarize(samples.inline);
const pushed = summarize(samples.pushed);
process.stdout.write(
  [
    `# Delivery of a quick async result — node ${process.version}, ${N} calls each`,
    '',
    '| path | p50 ms | p90 ms | p99 ms |',
    '| --- | ---: | ---: | ---: |',
    `| inline (default) | ${inline.p50} | ${inline.p90} | ${inline.p99} |`,
    `| pushed (--inline-wait 0) | ${pushed.p50} | ${pushed.p90} | ${pushed.p99} |`,
    '',
    `pushed / inline at p50: ${(pushed.p50 / inline.p50).toFixed(2)}`,
    '',
  ].join('\n'),
);
