// Workspace lanes (SPEC §14 lanes) through a server made in this process from its command line,
// with real commands that stamp their own start and end: two exclusive calls on one workspace never
// overlap and run in the order they came; the second answers at once that it is queued, behind
// whom; sent again while it waits, it is the same operation and runs once; cancelled while it
// waits, it never runs; `status` shows the line; two repositories in one scope do not wait for each
// other.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  E2E,
  structured,
  type CommandResult,
  type Operations,
  type RunningServer,
} from '../support/harness.js';

/** Each test its own servers and directories: they run at once, and cleanup ends them all. */
async function withE2E(test: (e2e: E2E) => Promise<void>): Promise<void> {
  const e2e = new E2E();
  try {
    await test(e2e);
  } finally {
    await e2e.cleanup();
  }
}

interface QueuedResult {
  readonly operation_id: string;
  readonly status: 'queued' | 'started';
  readonly queued_behind?: string;
  readonly queue_position?: number;
  readonly workspace?: string;
}

/** A command that appends its name to runs.log and prints when it started and ended (ns). */
const stamped = (name: string, seconds: number) =>
  `echo ${name} >> runs.log; echo "start $(date +%s%N)"; sleep ${String(seconds)}; echo "end $(date +%s%N)"`;

const times = (output: string) => ({
  start: BigInt(/start (\d+)/.exec(output)?.[1] ?? '0'),
  end: BigInt(/end (\d+)/.exec(output)?.[1] ?? '0'),
});

const start = async (server: RunningServer, command: string, cwd?: string) =>
  structured<QueuedResult>(
    await server.call('sandboxed_shell', {
      command,
      execution_mode: 'AsyncResultPush',
      ...(cwd === undefined ? {} : { working_directory: cwd }),
    }),
  );

/** Tools that declare their lane (the tool file's `concurrency`), added to the scope's tools. */
async function laneTools(dir: string): Promise<void> {
  const tool = (name: string, command: string, concurrency: string, parameter: string) => ({
    name,
    description: `Lane probe: ${command} in the ${concurrency} lane.`,
    command,
    concurrency,
    subcommand: [
      {
        name: 'default',
        description: `Runs ${command}.`,
        positional_args: [{ name: parameter, type: 'string', required: true }],
      },
    ],
  });
  const tools = [
    tool('touch_ro', 'touch', 'read_only', 'path'),
    tool('cat_ro', 'cat', 'read_only', 'path'),
    tool('sleep_service', 'sleep', 'service', 'seconds'),
  ];
  for (const definition of tools) {
    await writeFile(
      join(dir, '.ahma', 'tools', `${definition.name}.json`),
      JSON.stringify(definition),
    );
  }
}

const finished = async (server: RunningServer, ids: string[]) =>
  structured<Operations>(await server.call('await', { ids })).operations as CommandResult[];

describe.concurrent(
  'SPEC §14 lanes: exclusive calls take turns at their workspace',
  { timeout: 60_000 },
  () => {
    it('SPEC §14 lanes: the second writer answers at once that it is queued behind the first, runs after it ends, and a copy sent meanwhile is the same operation', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
        const first = await start(server, stamped('first', 0.6));
        expect(first.status).toBe('started');
        const second = await start(server, stamped('second', 0.2));
        expect(second).toMatchObject({
          status: 'queued',
          queued_behind: first.operation_id,
          queue_position: 1,
          workspace: scope.dir,
        });
        const again = await start(server, stamped('second', 0.2));
        expect(again.operation_id).toBe(second.operation_id);
        expect(again.status).toBe('queued');

        const line = structured<Operations>(await server.call('status', {}));
        expect(line.operations).toContainEqual(
          expect.objectContaining({ operation_id: second.operation_id, status: 'queued' }),
        );

        const [a, b] = await finished(server, [first.operation_id, second.operation_id]);
        expect(a?.status).toBe('completed');
        expect(b?.status).toBe('completed');
        const ranA = times(a?.output ?? '');
        const ranB = times(b?.output ?? '');
        expect(ranA.end).toBeGreaterThan(0n);
        expect(ranB.start).toBeGreaterThanOrEqual(ranA.end);
        expect(await readFile(join(scope.dir, 'runs.log'), 'utf8')).toBe('first\nsecond\n');
      }));

    it('SPEC §14 lanes: a queued call cancelled while it waits never runs; the one behind it moves up', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
        const holder = await start(server, stamped('holder', 0.6));
        const doomed = await start(server, stamped('doomed', 0.1));
        const last = await start(server, stamped('last', 0.1));
        expect(last.queued_behind).toBe(doomed.operation_id);
        await server.call('cancel', { id: doomed.operation_id });
        const [cancelled] = await finished(server, [doomed.operation_id]);
        expect(cancelled?.status).toBe('cancelled');
        const waiting = structured<Operations>(
          await server.call('status', { ids: [last.operation_id] }),
        ).operations[0] as QueuedResult | undefined;
        if (waiting?.status === 'queued') expect(waiting.queued_behind).toBe(holder.operation_id);
        const [, done] = await finished(server, [holder.operation_id, last.operation_id]);
        expect(done?.status).toBe('completed');
        expect(await readFile(join(scope.dir, 'runs.log'), 'utf8')).toBe('holder\nlast\n');
      }));

    it('SPEC §14 lanes: two repositories in one scope are two workspaces: their writers run at once', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        for (const repo of ['one', 'two'])
          await mkdir(join(scope.dir, repo, '.git'), { recursive: true });
        const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
        const one = await start(server, stamped('one', 0.5), join(scope.dir, 'one'));
        const two = await start(server, stamped('two', 0.5), join(scope.dir, 'two'));
        expect(one.status).toBe('started');
        expect(two.status).toBe('started');
        const [a, b] = await finished(server, [one.operation_id, two.operation_id]);
        // They overlapped: each started before the other ended.
        expect(times(b?.output ?? '').start).toBeLessThan(times(a?.output ?? '').end);
        expect(times(a?.output ?? '').start).toBeLessThan(times(b?.output ?? '').end);
      }));

    it('SPEC §14 lanes: a writer holds the workspace until its whole process tree is gone: the next one finds its background child ended', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
        const parent = await start(
          server,
          'sleep 30 >/dev/null 2>&1 & echo $! > child.pid; sleep 0.3; echo parent-exits',
        );
        const next = await start(
          server,
          'if [ -e /proc/$(cat child.pid) ]; then echo child-alive; else echo child-gone; fi',
        );
        expect(next.status).toBe('queued');
        const [, after] = await finished(server, [parent.operation_id, next.operation_id]);
        expect(after?.output).toBe('child-gone\n');
      }));

    it('SPEC §14 lanes: read_only and service tools run at once beside a writer; a read_only tool that writes fails', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        await laneTools(scope.dir);
        await writeFile(join(scope.dir, 'notes.txt'), 'readable\n');
        const server = await e2e.inProcess(scope, ['--inline-wait', '2']);
        // Long enough to outlast the three calls on a busy machine; cancelled at the end.
        const writer = await start(server, stamped('writer', 30));
        expect(writer.status).toBe('started');

        const read = structured<CommandResult>(await server.call('cat_ro', { path: 'notes.txt' }));
        expect(read).toMatchObject({ status: 'completed', exit_code: 0, output: 'readable\n' });
        const write = await server.call('touch_ro', { path: 'made-by-a-reader' });
        expect(write.isError).toBe(true);
        expect(structured<CommandResult>(write).output).toMatch(/Permission denied/);
        expect(existsSync(join(scope.dir, 'made-by-a-reader'))).toBe(false);
        const service = structured<CommandResult>(
          await server.call('sleep_service', { seconds: '0.1' }),
        );
        expect(service.status).toBe('completed');

        // All three ran while the writer still held the workspace.
        const [running] = structured<Operations>(
          await server.call('status', { ids: [writer.operation_id] }),
        ).operations;
        expect(running?.status).toBe('running');
        await server.call('cancel', { id: writer.operation_id });
      }));

    it('SPEC §14 lanes: a call may narrow its lane (concurrency), never give a read_only tool write access', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        await laneTools(scope.dir);
        const server = await e2e.inProcess(scope, ['--sync']);
        const narrowed = await server.call('sandboxed_shell', {
          command: 'touch narrowed.txt',
          concurrency: 'read_only',
        });
        expect(narrowed.isError).toBe(true);
        expect(existsSync(join(scope.dir, 'narrowed.txt'))).toBe(false);
        const widened = await server.call('touch_ro', { path: 'x', concurrency: 'exclusive' });
        expect(widened.isError).toBe(true);
        expect(structured<{ error: { code: string } }>(widened).error.code).toBe(
          'ARGUMENTS_INVALID',
        );
        const beside = structured<CommandResult>(
          await server.call('sandboxed_shell', { command: 'echo beside', concurrency: 'service' }),
        );
        expect(beside.output).toBe('beside\n');
      }));

    it('SPEC §14 lanes: a read_only tool called interactively (stdin open) stays read_only', () =>
      withE2E(async (e2e) => {
        const scope = await e2e.scope();
        await laneTools(scope.dir);
        const server = await e2e.inProcess(scope);
        await server.call('touch_ro', { path: 'typed-into', stdin: 'open' });
        await server.call('await', {});
        expect(existsSync(join(scope.dir, 'typed-into'))).toBe(false);
      }));
  },
);
