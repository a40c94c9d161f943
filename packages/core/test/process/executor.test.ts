// SPEC §3 through a real engine (no shell pool): one result shape for every outcome, one merged
// output stream (R15.1), non-interactive commands, timeouts and cancellation that take the whole
// process tree down (no orphan, no zombie), bounded output with a full log.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, outputBudgetBytes } from '../../src/process/output.js';
import {
  bash,
  engineFixture,
  markedProcesses,
  quote,
  run,
  survivors,
  waitForMarked,
  newMarker,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;
/** A 300 ms grace, for the SIGTERM-ignoring commands. */
let quick: EngineFixture;

beforeAll(async () => {
  [fixture, quick] = await Promise.all([
    engineFixture(),
    engineFixture({ timings: { graceMs: 300 } }),
  ]);
});

afterAll(async () => {
  await Promise.all([fixture.dispose(), quick.dispose()]);
});

/** Resolves to what the promise rejects with (fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error,
  );
}

describe('Executor: results', () => {
  it('SPEC §3: an argv command printing and exiting 0 → completed', async () => {
    const result = await run(fixture.engine, ['echo', 'hello', 'two  words', '$HOME', '*']);
    expect(result).toMatchObject({
      status: 'completed',
      exitCode: 0,
      signal: null,
      output: 'hello two  words $HOME *\n',
      truncated: false,
      fullOutputPath: undefined,
    });
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.durationMs).toBeLessThan(5000);
  });

  it('SPEC §3: exit 3 → failed with exitCode 3 and the output kept', async () => {
    const result = await run(fixture.engine, bash('echo before failing; exit 3'));
    expect(result).toMatchObject({
      status: 'failed',
      exitCode: 3,
      signal: null,
      output: 'before failing\n',
    });
  });

  it('SPEC §3: death by a signal → failed with the signal and no exit code', async () => {
    const result = await run(fixture.engine, bash('echo dying; kill -USR1 $$; echo unreachable'));
    expect(result).toMatchObject({
      status: 'failed',
      exitCode: null,
      signal: 'SIGUSR1',
      output: 'dying\nahma: the command was killed by SIGUSR1\n',
    });
  });

  it('SPEC §3: the command runs in the requested working directory', async () => {
    const sub = join(fixture.scope, 'sub dir');
    await mkdir(sub, { recursive: true });
    const result = await run(fixture.engine, ['pwd'], { cwd: sub });
    expect(result.output).toBe(`${sub}\n`);
  });

  it('SPEC §3: a missing program → exit 127 with a message naming it', async () => {
    const result = await run(fixture.engine, ['ahma-no-such-program-7f3a', '--flag']);
    expect(result.status).toBe('failed');
    expect(result.exitCode).toBe(127);
    expect(result.output).toContain('ahma-no-such-program-7f3a');
    expect(result.output).toMatch(/No such file or directory|not found/);
  });

  it('SPEC §3: a NUL byte in argv (or a script) → AhmaError ARGV_INVALID, nothing runs', async () => {
    const error = await rejection(run(fixture.engine, ['echo', 'a\0b']));
    expect(error).toBeInstanceOf(AhmaError);
    expect((error as AhmaError).code).toBe('ARGV_INVALID');
    expect((error as AhmaError).message).toMatch(/NUL/);
    const script = await rejection(run(fixture.engine, { kind: 'shell', script: 'echo a\0b' }));
    expect((script as AhmaError).code).toBe('ARGV_INVALID');
    const empty = await rejection(run(fixture.engine, []));
    expect((empty as AhmaError).code).toBe('ARGV_INVALID');
  });

  it('SPEC §3: a shell command ({kind: shell}) runs pipes and redirects inside the scope', async () => {
    const result = await run(fixture.engine, {
      kind: 'shell',
      script:
        'printf "b\\na\\nc\\n" | sort > sorted.txt && tr a-z A-Z < sorted.txt | tee upper.txt && ' +
        'cat missing-file 2>> errors.txt; wc -l < errors.txt',
    });
    expect(result.status).toBe('completed');
    expect(result.output).toBe('A\nB\nC\n1\n');
    expect(await readFile(join(fixture.scope, 'sorted.txt'), 'utf8')).toBe('a\nb\nc\n');
    expect(await readFile(join(fixture.scope, 'upper.txt'), 'utf8')).toBe('A\nB\nC\n');
  });
});

describe('Executor: merged output (R15.1)', () => {
  it('R15.1: stderr is merged into stdout chronologically', async () => {
    const result = await run(fixture.engine, bash('echo a; echo b >&2; echo c'));
    expect(result.output).toBe('a\nb\nc\n');
  });

  it('R15.1: many interleaved stdout/stderr lines keep their order', async () => {
    const result = await run(
      fixture.engine,
      bash('for i in $(seq 1 300); do echo "out $i"; echo "err $i" >&2; done'),
    );
    const expected = Array.from(
      { length: 300 },
      (_, i) => `out ${String(i + 1)}\nerr ${String(i + 1)}\n`,
    );
    expect(result.output).toBe(expected.join(''));
  });
});

describe('Executor: observers (the operations page)', () => {
  it('SPEC §15 operations page: an observer sees each command start, all of its output in order, and its end; then no more once it stops observing', async () => {
    const seen: string[] = [];
    const output = new Map<string, string>();
    const stop = fixture.engine.executor.observe({
      started: (logName, command, cwd) =>
        seen.push(
          `started ${logName} ${command.kind} ${String(cwd === fixture.engine.sandbox.scope)}`,
        ),
      output: (logName, chunk) =>
        output.set(logName, (output.get(logName) ?? '') + chunk.toString()),
      ended: (logName) => seen.push(`ended ${logName}`),
    });
    const script = 'for i in $(seq 1 200); do echo "line $i"; done; echo oops >&2';
    const result = await run(fixture.engine, { kind: 'shell', script }, { logName: 'observed-1' });
    // An observer that throws changes nothing for the command or the others.
    const stopThrowing = fixture.engine.executor.observe({
      started: () => {
        throw new Error('a bug of the observer');
      },
      output: () => {
        throw new Error('a bug of the observer');
      },
      ended: () => undefined,
    });
    const second = await run(fixture.engine, ['echo', 'two'], { logName: 'observed-2' });
    stopThrowing();
    stop();
    await run(fixture.engine, ['echo', 'unseen'], { logName: 'observed-3' });
    expect(result.status).toBe('completed');
    expect(second.output).toBe('two\n');
    expect(seen).toEqual([
      'started observed-1 shell true',
      'ended observed-1',
      'started observed-2 argv true',
      'ended observed-2',
    ]);
    expect(output.get('observed-1')).toBe(result.output);
    expect(output.get('observed-2')).toBe('two\n');
    expect(output.has('observed-3')).toBe(false);
  });
});

describe('Executor: non-interactive', () => {
  it('SPEC §3: stdin is /dev/null (cat ends at once with empty output)', async () => {
    const cat = await run(fixture.engine, ['cat'], { timeoutMs: 10_000 });
    expect(cat).toMatchObject({ status: 'completed', exitCode: 0, output: '' });
    expect(cat.durationMs).toBeLessThan(3000);
    const fd0 = await run(fixture.engine, ['readlink', '/proc/self/fd/0']);
    expect(fd0.output).toBe('/dev/null\n');
  });

  it('SPEC §3: a password prompt fails fast instead of hanging (getpass)', async () => {
    const result = await run(
      fixture.engine,
      ['python3', '-c', 'import getpass; getpass.getpass("Password: ")'],
      { timeoutMs: 15_000 },
    );
    expect(result.status).toBe('failed');
    expect(result.exitCode).not.toBe(0);
    expect(result.durationMs).toBeLessThan(5000);
  });

  it("SPEC §3: a prompt read from stdin (bash 'read -p') fails fast", async () => {
    const result = await run(fixture.engine, bash('read -p "Continue? " answer'), {
      timeoutMs: 15_000,
    });
    expect(result.status).toBe('failed');
    expect(result.exitCode).not.toBe(0);
    expect(result.durationMs).toBeLessThan(5000);
  });

  it('SPEC §3: the command has no controlling terminal', async () => {
    const result = await run(
      fixture.engine,
      bash('exec 3<>/dev/tty && echo HAS-TTY || echo no-tty'),
    );
    expect(result.output).toMatch(/no-tty/);
    expect(result.output).not.toMatch(/HAS-TTY/);
  });

  it('SPEC §3: the non-interactive environment reaches the command; askpass is removed', async () => {
    const custom = await engineFixture({
      env: {
        ...process.env,
        CI: '0',
        PAGER: 'less',
        GIT_ASKPASS: '/usr/bin/ahma-test-askpass',
        SSH_ASKPASS: '/usr/bin/ahma-test-askpass',
        AHMA_TEST_KEPT: 'kept value',
      },
    });
    try {
      const result = await run(custom.engine, ['env']);
      const env = new Map(
        result.output
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(env.get('CI')).toBe('1');
      expect(env.get('GIT_TERMINAL_PROMPT')).toBe('0');
      expect(env.get('PAGER')).toBe('cat');
      expect(env.get('GIT_PAGER')).toBe('cat');
      expect(env.get('DEBIAN_FRONTEND')).toBe('noninteractive');
      expect(env.get('AHMA_TEST_KEPT')).toBe('kept value');
      expect(env.get('PATH')).toBe(process.env['PATH']);
      expect(env.has('GIT_ASKPASS')).toBe(false);
      expect(env.has('SSH_ASKPASS')).toBe(false);
      expect(env.get('XDG_CACHE_HOME')?.startsWith(`${custom.engine.sandbox.cacheRoot}/`)).toBe(
        true,
      );
      // The redirected cache is writable from inside the sandbox.
      const cache = await run(
        custom.engine,
        bash(
          'mkdir -p "$XDG_CACHE_HOME/tool" && echo ok > "$XDG_CACHE_HOME/tool/x" && cat "$XDG_CACHE_HOME/tool/x"',
        ),
      );
      expect(cache.output).toBe('ok\n');
    } finally {
      await custom.dispose();
    }
  });
});

describe('Executor: stopping commands', () => {
  it("SPEC §3: a timeout beyond a Node timer's 32-bit range does not fire at once", async () => {
    // 3,000,000 s: a plain setTimeout would fire after 1 ms and time the command out.
    const result = await run(fixture.engine, ['sleep', '0.3'], { timeoutMs: 3_000_000_000 });
    expect(result).toMatchObject({ status: 'completed', exitCode: 0 });
    const waited = await fixture.engine.operations.await(
      [
        fixture.engine.operations.start('sleep', (signal, id) =>
          run(fixture.engine, ['sleep', '0.3'], { signal, logName: id }),
        ).id,
      ],
      3_000_000_000,
    );
    expect(waited.map((operation) => operation.status)).toEqual(['completed']);
  });

  it('SPEC §3: a timeout kills the whole process group, setsid grandchildren included → timed_out', async () => {
    const marker = newMarker();
    const script = [
      `setsid bash -c ${quote(`exec -a ${marker}-daemon sleep 300`)} &`,
      `(exec -a ${marker}-job sleep 300) &`,
      `exec -a ${marker}-main sleep 300`,
    ].join('\n');
    const pending = run(fixture.engine, bash(script), { timeoutMs: 1500 });
    const seen = await waitForMarked(marker, 3);
    const result = await pending;
    expect(result).toMatchObject({ status: 'timed_out' });
    expect(result.exitCode).toBeNull();
    expect(result.durationMs).toBeGreaterThanOrEqual(1400);
    expect(result.durationMs).toBeLessThan(5000);
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
  });

  it('SPEC §3: a command that ignores SIGTERM is SIGKILLed after graceMs, its setsid daemon too', async () => {
    const marker = newMarker();
    const script = [
      "trap '' TERM",
      `setsid bash -c ${quote(`trap '' TERM; exec -a ${marker}-daemon sleep 300`)} &`,
      `exec -a ${marker}-main sleep 300`,
    ].join('\n');
    const pending = run(quick.engine, bash(script), { timeoutMs: 1000 });
    const seen = await waitForMarked(marker, 2);
    const result = await pending;
    expect(result.status).toBe('timed_out');
    // timeout + graceMs (300), not the 2 s default grace nor the executor's backstop.
    expect(result.durationMs).toBeGreaterThanOrEqual(1250);
    expect(result.durationMs).toBeLessThan(2000);
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
  });

  it('SPEC §3: an AbortSignal cancels the command → cancelled, and the tree is gone', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    const script = [
      `setsid bash -c ${quote(`exec -a ${marker}-daemon sleep 300`)} &`,
      `exec -a ${marker}-main sleep 300`,
    ].join('\n');
    const pending = run(fixture.engine, bash(script), { signal: controller.signal });
    const seen = await waitForMarked(marker, 2);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ status: 'cancelled' });
    expect(result.durationMs).toBeLessThan(5000);
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
  });

  it('SPEC §3: an already-aborted signal → cancelled without starting the command', async () => {
    const result = await run(fixture.engine, ['touch', join(fixture.scope, 'never-created')], {
      signal: AbortSignal.abort(),
    });
    expect(result).toMatchObject({ status: 'cancelled', exitCode: null, output: '' });
    await expect(stat(join(fixture.scope, 'never-created'))).rejects.toThrow();
  });

  it('SPEC §3: background jobs a finished command leaves behind are killed and reaped', async () => {
    const marker = newMarker();
    const script = [
      `(exec -a ${marker}-job sleep 300) &`,
      `setsid bash -c ${quote(`exec -a ${marker}-daemon sleep 300`)} &`,
      // Finish only once the test has seen both, so the helper has something to clean up.
      `while [ ! -e ${marker}.go ]; do sleep 0.02; done`,
      'echo left behind',
    ].join('\n');
    const pending = run(fixture.engine, bash(script), { timeoutMs: 10_000 });
    const seen = await waitForMarked(marker, 2);
    await writeFile(join(fixture.scope, `${marker}.go`), '');
    const result = await pending;
    expect(result).toMatchObject({ status: 'completed', exitCode: 0, output: 'left behind\n' });
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
  });
});

describe('Executor: bounded output', () => {
  it('SPEC §3: 5 MB of output → truncated, bounded result, the full log holds all 5 MB', async () => {
    const size = 5 * 1024 * 1024;
    const logName = `five-mb-${String(process.pid)}`;
    const result = await run(
      fixture.engine,
      // Distinct lines (identical ones would collapse), 8 bytes each.
      bash(`seq 1000000 1999999 | head -c ${String(size)}`),
      {
        logName,
      },
    );
    expect(result.status).toBe('completed');
    expect(result.truncated).toBe(true);
    const budget = outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(budget);
    // In the engine's private log directory, named after the run with a random part (R7.6).
    expect(dirname(result.fullOutputPath ?? '')).toBe(fixture.engine.state.logDir);
    expect(basename(result.fullOutputPath ?? '')).toMatch(
      new RegExp(`^${logName}-[0-9a-f]{16}\\.log$`),
    );
    let lines = '';
    for (let n = 1000000; lines.length < size; n++) lines += `${String(n)}\n`;
    const expected = Buffer.from(lines).subarray(0, size);
    const logged = await readFile(result.fullOutputPath ?? '');
    expect(logged.length).toBe(size);
    expect(logged.equals(expected)).toBe(true);
    // Whole lines from the start and the end; the marker counts the bytes and lines between.
    const [head = '', tail = ''] = result.output.split(/\n\[… [^\n]*…\]\n/);
    expect(head.startsWith('1000000\n1000001\n')).toBe(true);
    expect(expected.toString().startsWith(head)).toBe(true);
    expect(expected.toString().endsWith(tail)).toBe(true);
    const middle = expected.subarray(head.length, size - tail.length).toString();
    expect(result.output).toContain(
      `${String(middle.length)} bytes (${String(middle.split('\n').length - 1)} lines) left out (of ${String(size)}); full output: ${String(result.fullOutputPath)}; read any part with the \`output\` tool: {"id": "${logName}"} …]`,
    );
  });

  it('SPEC §3: colour escapes from a command are stripped from its result', async () => {
    const result = await run(
      fixture.engine,
      bash(String.raw`printf '\033[1;32mgreen\033[0m \033]0;t\007done\n'`),
    );
    expect(result.output).toBe('green done\n');
  });
});
