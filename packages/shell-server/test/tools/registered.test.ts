// A registered command is a real tool (SPEC §8): it runs through the same engine as every command
// tool — the kernel sandbox, timeouts, async or sync, cancel, audit — with its arguments passed in
// their declared order, one argv element each. The real runtime in this process, the SDK's real
// Client, real processes in the real sandbox.
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  processesMatching,
  readLog,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type RunningServer,
  type Scope,
  type StartedResult,
} from '../support/harness.js';

async function scopeWithScript(e2e: E2E, name: string, body: string): Promise<Scope> {
  const scope = await e2e.scope();
  await mkdir(join(scope.dir, 'scripts'));
  const file = join(scope.dir, 'scripts', name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return scope;
}

const ECHO_ARGS = 'for a in "$@"; do printf "[%s]\\n" "$a"; done';

async function register(server: RunningServer, command: Record<string, unknown>): Promise<void> {
  const result = await server.call('add_command', { description: 'test command', ...command });
  expect(result.isError, textOf(result)).toBeUndefined();
}

describe.concurrent('a registered command', { timeout: 60_000 }, () => {
  it('SPEC §8: arguments reach the executable in declared order, one argv element each, never through a shell', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'args.sh', ECHO_ARGS);
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, {
      name: 'ordered',
      exec: './scripts/args.sh',
      args: {
        zeta: { type: 'string' },
        alpha: { type: 'string', flag: '--alpha' },
        mid: { type: 'number' },
        on: { type: 'boolean' },
        quiet: { type: 'boolean', flag: '-q' },
        loud: { type: 'boolean', flag: '--loud' },
        skipped: { type: 'string' },
      },
    });
    const danger = '$(touch pwned); a b > c';
    const result = structured<CommandResult>(
      await server.call('ordered', {
        loud: false,
        quiet: true,
        on: false,
        mid: 2.5,
        alpha: '-dash-is-fine-after-a-flag',
        zeta: danger,
      }),
    );
    expect(result.output).toBe(
      `[${danger}]\n[--alpha]\n[-dash-is-fine-after-a-flag]\n[2.5]\n[false]\n[-q]\n`,
    );
    const refused = await server.call('ordered', { zeta: '--output=/etc/x' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^\[ARGV_INVALID\] argument "zeta"/);
    const typed = await server.call('ordered', { mid: 'two' });
    expect(textOf(typed)).toMatch(/^\[ARGUMENTS_INVALID\]/);
  });

  it('R7.1: a format "path" argument is resolved inside the scope and refused outside it', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'args.sh', ECHO_ARGS);
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, {
      name: 'show',
      exec: './scripts/args.sh',
      args: { file: { type: 'string', format: 'path', required: true } },
    });
    await mkdir(join(scope.dir, 'sub'));
    const inside = structured<CommandResult>(
      await server.call('show', { file: 'a.txt', working_directory: 'sub' }),
    );
    expect(inside.output).toBe(`[${join(scope.dir, 'sub', 'a.txt')}]\n`);
    const outside = await server.call('show', { file: '../../../etc/passwd' });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/^\[PATH_OUTSIDE_SCOPE\]/);
  });

  it('R7.2: a registered command runs in the kernel sandbox: it writes inside the scope, not outside', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'write.sh', 'echo data > "$1" && echo wrote');
    const outside = await e2e.outsideDir();
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, {
      name: 'write_to',
      exec: './scripts/write.sh',
      args: { target: { type: 'string' } },
    });
    const inside = structured<CommandResult>(
      await server.call('write_to', { target: join(scope.dir, 'ok.txt') }),
    );
    expect(inside).toMatchObject({ status: 'completed', output: 'wrote\n' });
    const escaped = structured<CommandResult>(
      await server.call('write_to', { target: join(outside, 'escaped.txt') }),
    );
    expect(escaped.status).toBe('failed');
    expect(escaped.output).toMatch(/Permission denied|Read-only/);
  });

  it('SPEC §8: an async command answers started, its result is pushed, and await returns it', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'later.sh', 'sleep 0.3; echo "done $1"');
    const server = await e2e.inProcess(scope, ['--registry', '--inline-wait', '0']);
    await register(server, {
      name: 'later',
      exec: './scripts/later.sh',
      args: { what: { type: 'string' } },
      async: true,
    });
    const started = structured<StartedResult>(await server.call('later', { what: 'bg' }));
    expect(started).toMatchObject({ status: 'started', tool: 'later' });
    const awaited = await server.call('await', { ids: [started.operation_id] });
    expect(textOf(awaited)).toContain('done bg');
    await waitFor(
      () => server.messages.some((m) => JSON.stringify(m.data).includes(started.operation_id)),
      'the completion push',
    );
  });

  it('SPEC §8: the command\'s timeout ("1s") kills it; timeout_seconds of a call overrides it', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'slow.sh', 'sleep 30');
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, { name: 'snail', exec: './scripts/slow.sh', timeout: '1s' });
    const started = Date.now();
    const result = structured<CommandResult>(await server.call('snail'));
    expect(result.status).toBe('timed_out');
    expect(Date.now() - started).toBeLessThan(10_000);
    const shorter = structured<CommandResult>(await server.call('snail', { timeout_seconds: 0.2 }));
    expect(shorter.status).toBe('timed_out');
    expect(shorter.duration_ms).toBeLessThan(1000);
  });

  it('SPEC §8: cancel kills a running registered command and its processes', async ({ e2e }) => {
    const marker = uniqueMarker();
    const scope = await scopeWithScript(e2e, 'wait.sh', 'sleep 60');
    const server = await e2e.inProcess(scope, ['--registry', '--inline-wait', '0']);
    await register(server, {
      name: 'waits',
      exec: './scripts/wait.sh',
      args: { marker: { type: 'string' } },
      async: true,
    });
    const started = structured<StartedResult>(await server.call('waits', { marker }));
    await waitFor(async () => (await processesMatching(marker)).length > 0, 'the script running');
    const cancelled = await server.call('cancel', { id: started.operation_id });
    expect(structured<CommandResult>(cancelled).status).toBe('cancelled');
    await waitFor(async () => (await processesMatching(marker)).length === 0, 'no process left');
  });

  it('EC3: a command whose executable disappeared fails with a clear error at call time', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'vanish.sh', 'echo here');
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, { name: 'vanish', exec: './scripts/vanish.sh' });
    await rm(join(scope.dir, 'scripts', 'vanish.sh'));
    const result = await server.call('vanish');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `[EXEC_NOT_FOUND] exec ./scripts/vanish.sh: ${join(scope.dir, 'scripts', 'vanish.sh')} does not exist`,
    );
  });

  it('NFR4.3: every execution of a registered command is audited with the argv that ran', async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'args.sh', ECHO_ARGS);
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, {
      name: 'audited',
      exec: './scripts/args.sh',
      args: { word: { type: 'string' } },
    });
    const result = structured<CommandResult>(await server.call('audited', { word: 'x y' }));
    await server.close();
    const audits = (await readLog(scope)).lines.flatMap((line) =>
      line['msg'] === 'execution'
        ? [line['audit'] as { operation: string; tool: string; argv: string[] }]
        : [],
    );
    expect(audits.find((a) => a.operation === result.operation_id)).toMatchObject({
      tool: 'audited',
      argv: [join(scope.dir, 'scripts', 'args.sh'), 'x y'],
    });
  });

  it("SPEC §3: a registered command's output is bounded like every command's, the whole of it kept in a file", async ({
    e2e,
  }) => {
    const scope = await scopeWithScript(e2e, 'flood.sh', 'seq 1 200000');
    const server = await e2e.inProcess(scope, ['--registry']);
    await register(server, { name: 'flood', exec: './scripts/flood.sh' });
    const result = structured<CommandResult>(await server.call('flood'));
    expect(result.status).toBe('completed');
    expect(result.truncated).toBe(true);
    expect(result.output.length).toBeLessThan(200_000);
    expect(result.full_output_path).toBeDefined();
  });
});
