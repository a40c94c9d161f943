#!/usr/bin/env node
// Tasks benchmark (SPEC §12, MCP 2025-11-25 tasks): what a task costs over a plain call, through
// ahma-shell over stdio with the SDK's real client, a sandboxed `echo hi` each time.
//
//   pnpm build && node bench/tasks.mjs [--n 300] [--concurrent 50]
//
//   plain call       tools/call {"command": "echo hi", "execution_mode": "Synchronous"}: the result
//   task + result    tools/call with "task" (answered with the task at once), then tasks/result
//   task answered    the first half alone: the call that answers with the task
//   tasks/result lag for `sleep 0.2; echo hi` tasks: from the task's answer to tasks/result's,
//                    less the command's own duration_ms — about how late the result comes after the
//                    command ends (the wait is woken by the operation's end, not polled; the
//                    duration starts a little before the answer, so this errs low)
// The three timed kinds are sampled round-robin, so they share the machine's noise. Then
// --concurrent tasks started at once and all their results awaited: wall time, and that every
// one completed.
import { mkdtempSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { numberOption } from './args.mjs';
import { summarize } from './stats.mjs';

const N = numberOption('n', 300);
const CONCURRENT = numberOption('concurrent', 50);
const ahmaBin = fileURLToPath(
  new URL('../packages/shell-server/bin/ahma-shell.js', import.meta.url),
);
const scope = mkdtempSync('/var/tmp/ahma-tasks-bench-');

const client = new Client({ name: 'ahma-tasks-bench', version: '1.0.0' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [ahmaBin, '--mode', 'stdio', '--sandbox-scope', scope, '--inline-wait', '0'],
    stderr: 'ignore',
  }),
);

const plain = () =>
  client.callTool({
    name: 'sandboxed_shell',
    arguments: { command: 'echo hi', execution_mode: 'Synchronous' },
  });
const createTask = (command) =>
  client.request(
    { method: 'tools/call', params: { name: 'sandboxed_shell', arguments: { command }, task: {} } },
    CreateTaskResultSchema,
  );
const resultOf = (taskId) => client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);

const times = { plain: [], task: [], answered: [], lag: [] };
async function timed(kind, work) {
  const started = performance.now();
  const value = await work();
  times[kind].push(performance.now() - started);
  return value;
}

for (let i = 0; i < 20; i++) await resultOf((await createTask('echo hi')).task.taskId);
for (let i = 0; i < N; i++) {
  await timed('plain', plain);
  await timed('task', async () => resultOf((await createTask('echo hi')).task.taskId));
  await timed('answered', () => createTask('echo hi'));
}
for (let i = 0; i < Math.min(N, 40); i++) {
  const { task } = await createTask('sleep 0.2; echo hi');
  const created = performance.now();
  const result = await resultOf(task.taskId);
  const ended = created + result.structuredContent.duration_ms;
  times.lag.push(performance.now() - ended);
}

const startedAll = performance.now();
const tasks = await Promise.all(
  Array.from({ length: CONCURRENT }, (_, i) => createTask(`sleep 0.5; echo ${String(i)}`)),
);
const results = await Promise.all(tasks.map(({ task }) => resultOf(task.taskId)));
const wall = performance.now() - startedAll;
const completed = results.filter((r) => r.structuredContent?.status === 'completed').length;
await client.close();
rmSync(scope, { recursive: true, force: true });

const row = (name, samples) => {
  const s = summarize(samples);
  return `| ${name} | ${s.p50.toFixed(3)} | ${s.p90.toFixed(3)} | ${String(samples.length)} |`;
};
const lines = [
  `# Tasks — node ${process.version}, ${String(N)} of each, round-robin`,
  '',
  '| what | p50 ms | p90 ms | samples |',
  '| --- | ---: | ---: | ---: |',
  row('plain call (sync echo hi)', times.plain),
  row('task + tasks/result', times.task),
  row('task answered (tools/call with task)', times.answered),
  row('tasks/result lag after the command ended', times.lag),
  '',
  `${String(CONCURRENT)} concurrent tasks (sleep 0.5 each): all results in ${wall.toFixed(0)} ms, ${String(completed)}/${String(CONCURRENT)} completed`,
];
process.stdout.write(`${lines.join('\n')}\n`);
