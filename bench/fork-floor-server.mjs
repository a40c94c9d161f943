#!/usr/bin/env node
// The process-per-command floor of issue 31: an MCP server (the SDK v1's Server over stdio) whose
// one tool, `run`, hands the command to a warm bash that forks one subshell for it. No sandbox, no
// supervision, no copies kept ready: a call costs the protocol, one fork of a warm bash and the
// command. What any server that runs each command in a process of its own pays at the least.
//
// --supervised: the subshell forks the command a process of its own and waits for it, as a
// supervisor does (still no sandbox, no tree to end, no copies kept ready): what a command that
// keeps its own supervised process pays at the least, two processes per command.
//
//   node bench/mcp.mjs   (the servers "fork floor" and "fork floor, supervised")
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

// Output goes through a file in tmpfs: the subshells run at once, and each needs a channel of its own.
const outputs = mkdtempSync('/dev/shm/ahma-fork-floor-');
// A request is one line, "ID COMMAND". For each, bash forks one subshell (the `{ …; } &` group),
// which runs the command with its output in the file ID and then writes "ID STATUS" to fd 3: a line
// under PIPE_BUF, so the subshells' lines never interleave. Each is disowned: bash would keep every
// finished one in its job table, and each fork would get slower than the last (silent when the
// subshell has already ended).
const group = process.argv.includes('--supervised') ? '( eval "$cmd" )' : '{ eval "$cmd"; }';
const LOOP = `while IFS=' ' read -r id cmd; do
  { ${group} >"$0/$id" 2>&1; printf '%s %s\\n' "$id" "$?" >&3; } &
  disown 2>/dev/null
done`;
const bash = spawn('bash', ['-c', LOOP, outputs], { stdio: ['pipe', 'ignore', 'inherit', 'pipe'] });

/** The calls waiting for their command, by ID. */
const waiting = new Map();
let nextId = 0;
createInterface({ input: bash.stdio[3] }).on('line', (line) => {
  const [id, status] = line.split(' ');
  const file = join(outputs, id);
  const output = readFileSync(file, 'utf8');
  unlinkSync(file);
  waiting.get(id)?.({ output, status: Number(status) });
  waiting.delete(id);
});

function run(command) {
  if (command.includes('\n')) throw new Error('one line per command');
  const id = String(nextId++);
  return new Promise((resolve) => {
    waiting.set(id, resolve);
    bash.stdin.write(`${id} ${command}\n`);
  });
}

const server = new Server(
  { name: 'fork-floor', version: '1.0.0' },
  { capabilities: { tools: {} } },
);
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: 'run',
      description: 'Runs a shell command in a subshell forked from a warm bash.',
      inputSchema: {
        type: 'object',
        properties: { command: { type: 'string' } },
        required: ['command'],
      },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { output, status } = await run(String(request.params.arguments?.['command'] ?? ''));
  return { content: [{ type: 'text', text: output }], isError: status !== 0 };
});
const transport = new StdioServerTransport();
transport.onclose = () => {
  bash.kill();
  rmSync(outputs, { recursive: true, force: true });
};
await server.connect(transport);
