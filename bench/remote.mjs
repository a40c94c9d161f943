#!/usr/bin/env node
// Remote MCP servers through Ahma (SPEC §10): what the proxy adds to a remote tool's call. A real
// Streamable HTTP MCP server (the SDK's, in this process, one tool `echo`) is called directly by the
// SDK's client, and through `ahma-shell --mode stdio --mcp-config` as `remote_echo`, sampled
// round-robin. (No OAuth here: the login is a one-off; this measures every call after it.)
//
//   pnpm build && node bench/remote.mjs [--n 300]
import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { numberOption } from './args.mjs';
import { roundRobin, summarize } from './stats.mjs';

const N = numberOption('n', 300);
const ahmaBin = fileURLToPath(
  new URL('../packages/shell-server/bin/ahma-shell.js', import.meta.url),
);

// The remote: a stateless Streamable HTTP server, a server object per request.
const remote = createServer((req, res) => {
  const server = new Server(
    { name: 'bench-remote', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: String(request.params.arguments?.text ?? '') }],
  }));
  const transport = new StreamableHTTPServerTransport({});
  res.on('close', () => void server.close());
  void server.connect(transport).then(() => transport.handleRequest(req, res));
});
await new Promise((resolve) => remote.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${String(remote.address().port)}/mcp`;

const scope = mkdtempSync('/var/tmp/ahma-remote-bench-');
mkdirSync(join(scope, '.ahma'));
writeFileSync(
  join(scope, '.ahma', 'mcp.json'),
  JSON.stringify({ servers: { remote: { type: 'http', url } } }),
);

const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
const viaAhma = new Client({ name: 'bench-via-ahma', version: '1.0.0' });
await viaAhma.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [ahmaBin, '--mode', 'stdio', '--sandbox-scope', scope],
    stderr: 'ignore',
  }),
);
// The remote's tools are listed once Ahma connected to it, in the background.
for (let i = 0; ; i++) {
  const { tools } = await viaAhma.listTools();
  if (tools.some((tool) => tool.name === 'remote_echo')) break;
  if (i > 200) throw new Error('remote_echo never appeared');
  await new Promise((resolve) => setTimeout(resolve, 50));
}

const kinds = {
  'direct (SDK client → remote)': () =>
    direct.callTool({ name: 'echo', arguments: { text: 'hi' } }),
  'through ahma-shell (stdio → remote)': () =>
    viaAhma.callTool({ name: 'remote_echo', arguments: { text: 'hi' } }),
};
const times = await roundRobin(kinds, N);
await Promise.all([direct.close(), viaAhma.close()]);
remote.close();
rmSync(scope, { recursive: true, force: true });

const [base] = Object.keys(kinds);
const row = (kind) => {
  const s = summarize(times[kind]);
  return `| ${kind} | ${s.p50.toFixed(3)} | ${s.p90.toFixed(3)} | ${(s.p50 / summarize(times[base]).p50).toFixed(2)}× |`;
};
const lines = [
  `# Remote tools through Ahma — node ${process.version}, ${String(N)} of each, round-robin`,
  '',
  '| what | p50 ms | p90 ms | against direct |',
  '| --- | ---: | ---: | ---: |',
  ...Object.keys(kinds).map(row),
];
process.stdout.write(`${lines.join('\n')}\n`);
