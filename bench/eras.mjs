#!/usr/bin/env node
// Protocol eras benchmark (SPEC §12, docs/decisions/0001): what a call costs in the 2026-07-28 era
// (SDK v2 server) against the 2025 eras (SDK v1 server), on the same ahma-shell, each client a
// real SDK client over the real transport, a sandboxed `echo hi` each time.
//
//   pnpm build && node bench/eras.mjs [--n 300]
//
//   stdio 2025 call    v1 client, initialize 2025-11-25: tools/call (Synchronous)
//   stdio 2026 call    v2 client pinned to 2026-07-28 (server/discover, _meta envelope): the same
//   stdio 2026 task    raw JSON-RPC lines, SEP-2663 opt-in: tools/call answered with a task
//                      (--inline-wait 0), then tasks/get at once and again until it is completed
//   http 2025 call     v1 client in a Streamable HTTP session: the same call
//   http 2026 call     v2 client pinned to 2026-07-28, sessionless: the same call
// Every kind is sampled round-robin, so all share the machine's noise; ratios are against the
// 2025 call over the same transport.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { numberOption } from './args.mjs';
import { roundRobin, summarize } from './stats.mjs';

const N = numberOption('n', 300);
const ahmaBin = fileURLToPath(
  new URL('../packages/shell-server/bin/ahma-shell.js', import.meta.url),
);
const scope = mkdtempSync('/var/tmp/ahma-eras-bench-');
const stdioArgs = [ahmaBin, '--mode', 'stdio', '--sandbox-scope', scope, '--inline-wait', '0'];
const MODERN = '2026-07-28';
const CALL = {
  name: 'sandboxed_shell',
  arguments: { command: 'echo hi', execution_mode: 'Synchronous' },
};

const legacyStdio = new Client({ name: 'eras-bench', version: '1.0.0' });
await legacyStdio.connect(
  new StdioClientTransport({ command: process.execPath, args: stdioArgs, stderr: 'ignore' }),
);
const pinned = { versionNegotiation: { mode: { pin: MODERN } } };
const modernStdio = new ModernClient({ name: 'eras-bench', version: '1.0.0' }, pinned);
await modernStdio.connect(
  new ModernStdio({ command: process.execPath, args: stdioArgs, stderr: 'ignore' }),
);
const raw = rawStdio();

// One HTTP server for both HTTP clients.
const http = spawn(
  process.execPath,
  [ahmaBin, '--mode', 'http', '--http-port', '0', '--sandbox-scope', scope],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const url = await new Promise((resolve, reject) => {
  let stderr = '';
  http.stderr.on('data', (chunk) => {
    stderr += chunk;
    const found = /listening on (http:\/\/\S+)/.exec(stderr);
    if (found) resolve(found[1]);
  });
  http.once('exit', () => reject(new Error(`the HTTP server exited: ${stderr}`)));
});
const legacyHttp = new Client({ name: 'eras-bench', version: '1.0.0' });
await legacyHttp.connect(new StreamableHTTPClientTransport(new URL(url)));
const modernHttp = new ModernClient({ name: 'eras-bench', version: '1.0.0' }, pinned);
await modernHttp.connect(new ModernHttp(new URL(url)));

const kinds = {
  'stdio 2025 call': () => legacyStdio.callTool(CALL),
  'stdio 2026 call': () => modernStdio.callTool(CALL),
  'stdio 2026 task': () => raw.task(),
  'http 2025 call': () => legacyHttp.callTool(CALL),
  'http 2026 call': () => modernHttp.callTool(CALL),
};
const times = await roundRobin(kinds, N);

await Promise.all([
  legacyStdio.close(),
  modernStdio.close(),
  legacyHttp.close(),
  modernHttp.close(),
]);
raw.close();
http.kill('SIGTERM');
await new Promise((resolve) => http.once('exit', resolve));
rmSync(scope, { recursive: true, force: true });

const p50 = (kind) => summarize(times[kind]).p50;
const row = (kind, base) => {
  const s = summarize(times[kind]);
  return `| ${kind} | ${s.p50.toFixed(3)} | ${s.p90.toFixed(3)} | ${(s.p50 / p50(base)).toFixed(2)}× |`;
};
const lines = [
  `# Protocol eras — node ${process.version}, ${String(N)} of each, round-robin`,
  '',
  '| what | p50 ms | p90 ms | against 2025 |',
  '| --- | ---: | ---: | ---: |',
  row('stdio 2025 call', 'stdio 2025 call'),
  row('stdio 2026 call', 'stdio 2025 call'),
  row('stdio 2026 task', 'stdio 2025 call'),
  row('http 2025 call', 'http 2025 call'),
  row('http 2026 call', 'http 2025 call'),
];
process.stdout.write(`${lines.join('\n')}\n`);

/** A stdio server driven with raw 2026-07-28 lines that opt into SEP-2663 tasks. */
function rawStdio() {
  const child = spawn(process.execPath, stdioArgs, { stdio: ['pipe', 'pipe', 'ignore'] });
  const waiting = new Map();
  let buffer = '';
  let next = 0;
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) !== -1) {
      const message = JSON.parse(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'eras-bench', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    },
  };
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } })}\n`,
      );
    });
  return {
    async task() {
      const created = await request('tools/call', {
        name: 'sandboxed_shell',
        arguments: { command: 'echo hi' },
      });
      const { taskId } = created.result;
      if (taskId === undefined) throw new Error(`no task: ${JSON.stringify(created)}`);
      for (;;) {
        const got = await request('tasks/get', { taskId });
        if (got.result.status === 'completed') return got.result;
      }
    },
    close: () => child.stdin.end(),
  };
}
