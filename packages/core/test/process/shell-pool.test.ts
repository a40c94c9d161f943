// The pre-warmed shell pool seen through the engine (R4.1): pooled runs behave exactly like direct
// spawns, nothing leaks between commands, stopping kills exactly the command's tree, and the pool
// survives its zygote dying or going idle. ShellPool.take's environment entries (a command's own
// variables, R7.16's proxy URL among them) reach argv and shell units verbatim.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import type { Command } from '../../src/process/execution-types.js';
import type { ShellPool } from '../../src/process/shell-pool.js';
import { descendantsOf } from '../support/sandbox-helper.js';
import {
  bash,
  engineFixture,
  eventually,
  markedProcesses,
  newMarker,
  procStat,
  run,
  survivors,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

let pooled: EngineFixture;
let direct: EngineFixture;

beforeAll(async () => {
  pooled = await engineFixture({ noShellPool: false, poolSize: 2, timings: { graceMs: 300 } });
  direct = await engineFixture({ noShellPool: true, timings: { graceMs: 300 } });
});

afterAll(async () => {
  await pooled.dispose();
  await direct.dispose();
});

const printArgv = ['node', '-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))'];
const hostile = [
  '; rm -rf ~',
  '$(id)',
  '`id`',
  'a\nb',
  '--upload-pack=evil',
  "it's",
  '"q"',
  '*',
  '',
  'ünï ☃',
];

const cases: [string, Command][] = [
  ['argv echo', { kind: 'argv', argv: ['echo', 'hi'] }],
  ['hostile argv words', { kind: 'argv', argv: [...printArgv, ...hostile] }],
  ['exit code 3', { kind: 'argv', argv: bash('echo out; exit 3') }],
  ['merged stderr', { kind: 'shell', script: 'echo a; echo b >&2; echo c' }],
  [
    'pipes and redirects',
    { kind: 'shell', script: 'echo hello | tr a-z A-Z > up.txt && cat up.txt' },
  ],
  ['stdin is /dev/null', { kind: 'argv', argv: ['cat'] }],
  ['non-interactive env', { kind: 'shell', script: 'echo "$CI $GIT_TERMINAL_PROMPT $PAGER"' }],
];

describe('R4.1: the shell pool', () => {
  it.each(cases)(
    'R4.1: %s gives the same result pooled and spawned directly',
    async (_, command) => {
      const before = pooled.engine.pool?.stats.pooled ?? 0;
      const [viaPool, viaSpawn] = [
        await run(pooled.engine, command),
        await run(direct.engine, command),
      ];
      expect(pooled.engine.pool?.stats.pooled).toBe(before + 1);
      for (const result of [viaPool, viaSpawn]) expect(result.durationMs).toBeGreaterThan(0);
      const shape = (r: typeof viaPool) => ({
        status: r.status,
        exitCode: r.exitCode,
        signal: r.signal,
        output: r.output,
      });
      expect(shape(viaPool)).toEqual(shape(viaSpawn));
    },
  );

  it('SPEC §3: large outputs (the full log written with backpressure) never leave the pool paused', async () => {
    // Several megabytes, some of them at once: the log file falls behind, the pool's output is
    // paused, and a command may end while it is. The next command must still run.
    const big = (mb: number) =>
      ({
        kind: 'shell',
        script: `head -c ${String(mb * 1_000_000)} /dev/zero | tr '\\0' a`,
      }) as const;
    for (const result of await Promise.all([
      run(pooled.engine, big(3)),
      run(pooled.engine, big(2)),
    ]))
      expect(result).toMatchObject({ status: 'completed', truncated: true });
    for (let i = 0; i < 3; i++) {
      expect((await run(pooled.engine, big(1.3))).status).toBe('completed');
      expect((await run(pooled.engine, ['echo', 'after'], { timeoutMs: 5_000 })).output).toBe(
        'after\n',
      );
    }
  });

  it('R4.1: hostile values arrive at the program as exactly one word each', async () => {
    const result = await run(pooled.engine, [...printArgv, ...hostile]);
    expect(JSON.parse(result.output)).toEqual(hostile);
  });

  it('R4.1: a missing program fails with 127 and says so', async () => {
    const result = await run(pooled.engine, ['ahma-no-such-program']);
    expect(result).toMatchObject({ status: 'failed', exitCode: 127 });
    expect(result.output).toContain('ahma-no-such-program');
  });

  it('R4.1: the working directory is honoured per command', async () => {
    const sub = join(pooled.scope, 'sub dir');
    await mkdir(sub, { recursive: true });
    expect((await run(pooled.engine, ['pwd'], { cwd: sub })).output).toBe(`${sub}\n`);
    expect((await run(pooled.engine, { kind: 'shell', script: 'pwd' }, { cwd: sub })).output).toBe(
      `${sub}\n`,
    );
  });

  it('R4.1: no state leaks between commands (cd, exported variables, exit, background jobs)', async () => {
    const marker = newMarker();
    const first = await run(pooled.engine, {
      kind: 'shell',
      script: `cd /; export AHMA_LEAK=1; LEAK2=2; (exec -a ${marker} sleep 300) & exit 0`,
    });
    expect(first.status).toBe('completed');
    const second = await run(pooled.engine, {
      kind: 'shell',
      script: 'pwd; echo "${AHMA_LEAK-unset} ${LEAK2-unset}"; jobs | wc -l',
    });
    expect(second.output).toBe(`${pooled.scope}\nunset unset\n0\n`);
    // The background job of the first command ended with it.
    expect(await eventually(() => markedProcesses(marker).length === 0)).toBe(true);
  });

  it('R4.1: a timeout kills exactly the command and its whole tree', async () => {
    const marker = newMarker();
    const bystander = newMarker();
    // Runs until the test has seen it survive the other's timeout.
    const other = run(pooled.engine, {
      kind: 'shell',
      script: `exec -a ${bystander} bash -c 'while [ ! -e ${bystander}.go ]; do sleep 0.02; done'`,
    });
    const script = `setsid bash -c 'exec -a ${marker}-daemon sleep 300' & exec -a ${marker}-main sleep 300`;
    const pending = run(pooled.engine, { kind: 'shell', script }, { timeoutMs: 500 });
    const seen = await waitForMarked(marker, 2);
    const result = await pending;
    expect(result).toMatchObject({ status: 'timed_out' });
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
    // The other pooled command was not touched. (At least one: its loop forks each sleep, and a
    // fork carries the bystander's name until it execs.)
    expect(markedProcesses(bystander).length).toBeGreaterThanOrEqual(1);
    await writeFile(join(pooled.scope, `${bystander}.go`), '');
    expect((await other).status).toBe('completed');
  });

  it('R4.1: cancel kills the pooled command', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    const pending = run(
      pooled.engine,
      { kind: 'shell', script: `exec -a ${marker} sleep 300` },
      { signal: controller.signal },
    );
    const seen = await waitForMarked(marker, 1);
    controller.abort();
    expect(await pending).toMatchObject({ status: 'cancelled' });
    expect(survivors(seen)).toEqual([]);
  });

  it('R4.1: a burst beyond the pool size completes', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        run(pooled.engine, { kind: 'shell', script: `echo ${String(i)}` }),
      ),
    );
    expect(results.map((r) => r.output)).toEqual(
      Array.from({ length: 12 }, (_, i) => `${String(i)}\n`),
    );
  });

  it('R4.1: the sandbox applies to pooled commands', async () => {
    const result = await run(pooled.engine, {
      kind: 'shell',
      script: 'touch /var/tmp/ahma-pool-escape-$$',
    });
    expect(result.status).toBe('failed');
    expect(result.output).toContain('Permission denied');
  });
});

describe('R4.1: environment entries of one pooled command (ShellPool.take)', () => {
  const poolOf = (): ShellPool => {
    const pool = pooled.engine.pool;
    if (pool === undefined) throw new Error('the pooled engine has no pool');
    return pool;
  };

  /** Runs `command` in a warm unit with `env`; its output and exit. */
  const take = async (command: Command, env?: Record<string, string>) => {
    const pool = poolOf();
    pool.start();
    await eventually(() => pool.stats.zygotePid !== undefined);
    const running = pool.take(command, pooled.scope, env);
    if (running === undefined) throw new Error('the pool zygote is not running');
    let output = '';
    running.onOutput((chunk) => (output += chunk.toString('utf8')));
    const exit = await running.exit;
    return { output, ...exit };
  };

  const values = () => ({
    FOO: 'two  words ',
    LINES: 'a\nb\n',
    SUBST: `$(touch ${pooled.scope}/pwned)`,
    TICKS: `\`touch ${pooled.scope}/pwned2\``,
    QUOTES: `it's "q" \\ $HOME \${PATH}`,
    EQUALS: 'x=y==z',
    EMPTY: '',
    UNICODE: 'ünï ☃',
  });
  const dump = (names: readonly string[]) => [
    'node',
    '-e',
    'process.stdout.write(JSON.stringify(Object.fromEntries(process.argv.slice(1).map((n) => [n, process.env[n] ?? null]))))',
    ...names,
  ];

  it('R4.1: entries reach an argv unit and a shell unit (`echo "$FOO"`) verbatim; spaces, newlines and $(…) are not evaluated', async () => {
    const env = values();
    const names = Object.keys(env);
    const argv = await take({ kind: 'argv', argv: dump(names) }, env);
    expect(argv).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(argv.output)).toEqual(env);
    const echo = await take({ kind: 'shell', script: 'echo "$FOO"; printf "%s" "$LINES"' }, env);
    expect(echo).toMatchObject({ output: 'two  words \na\nb\n', code: 0 });
    // Exported: what the shell starts sees them too.
    const child = await take(
      {
        kind: 'shell',
        script: `exec ${dump(names)
          .map((w) => `'${w.replaceAll("'", "'\\''")}'`)
          .join(' ')}`,
      },
      env,
    );
    expect(JSON.parse(child.output)).toEqual(env);
    expect(existsSync(`${pooled.scope}/pwned`)).toBe(false);
    expect(existsSync(`${pooled.scope}/pwned2`)).toBe(false);
  });

  it("R4.1: without entries a command runs as before, and one command's entries never reach the next", async () => {
    expect(await take({ kind: 'shell', script: 'echo "${FOO-unset}"' })).toMatchObject({
      output: 'unset\n',
      code: 0,
    });
    expect(await take({ kind: 'argv', argv: ['echo', 'plain'] }, {})).toMatchObject({
      output: 'plain\n',
      code: 0,
    });
    await take({ kind: 'shell', script: 'true' }, { FOO: 'first' });
    const [shell, argv] = [
      await take({ kind: 'shell', script: 'echo "${FOO-unset}"' }),
      await take({ kind: 'argv', argv: dump(['FOO']) }),
    ];
    expect(shell.output).toBe('unset\n');
    expect(JSON.parse(argv.output)).toEqual({ FOO: null });
  });

  it('R4.1: a name the frame cannot carry, a reserved one, or a NUL in a value is refused before anything is sent (COMMAND_INVALID)', () => {
    const pool = poolOf();
    const before = pool.stats.pooled;
    for (const env of [
      { '1A': 'x' },
      { 'A-B': 'x' },
      { 'A=B': 'x' },
      { '': 'x' },
      { 'A B': 'x' },
      { __ahma_script: 'x' },
      { OK: 'a\0b' },
    ]) {
      let caught: unknown;
      try {
        pool.take({ kind: 'argv', argv: ['true'] }, pooled.scope, env);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(env)).toBeInstanceOf(AhmaError);
      expect((caught as AhmaError).code).toBe('COMMAND_INVALID');
    }
    expect(pool.stats.pooled).toBe(before);
  });
});

describe('R4.1: pool lifecycle', () => {
  it('R4.1: a zygote killed from outside fails its running command clearly; later commands spawn directly, then pool again', async () => {
    const fixture = await engineFixture({
      noShellPool: false,
      poolSize: 1,
      timings: { graceMs: 300 },
    });
    try {
      const pool = fixture.engine.pool;
      expect(pool).toBeDefined();
      expect((await run(fixture.engine, ['echo', 'warm'])).output).toBe('warm\n');
      const zygote = pool?.stats.zygotePid;
      expect(zygote).toBeGreaterThan(0);
      const marker = newMarker();
      const pending = run(fixture.engine, { kind: 'shell', script: `exec -a ${marker} sleep 300` });
      const seen = await waitForMarked(marker, 1);
      process.kill(zygote ?? 0, 'SIGKILL');
      const result = await pending;
      expect(result.status).toBe('failed');
      expect(result.output).toContain('the shell pool stopped while the command ran');
      // The command's supervisor got its parent-death signal and took the tree down.
      expect(await eventually(() => survivors(seen).length === 0)).toBe(true);
      const directBefore = pool?.stats.direct ?? 0;
      expect((await run(fixture.engine, ['echo', 'after'])).output).toBe('after\n');
      expect(pool?.stats.direct).toBe(directBefore + 1);
      expect(await eventually(() => pool?.stats.zygotePid !== undefined)).toBe(true);
      expect(pool?.stats.zygotePid).not.toBe(zygote);
      const pooledBefore = pool?.stats.pooled ?? 0;
      expect((await run(fixture.engine, ['echo', 'again'])).output).toBe('again\n');
      expect(pool?.stats.pooled).toBe(pooledBefore + 1);
    } finally {
      await fixture.dispose();
    }
  });

  it('R4.1: an idle pool is reaped, and the next command still runs', async () => {
    const fixture = await engineFixture({ noShellPool: false, poolSize: 2, poolIdleMs: 300 });
    try {
      const pool = fixture.engine.pool;
      const zygote = pool?.stats.zygotePid ?? 0;
      expect(zygote).toBeGreaterThan(0);
      expect(await eventually(() => pool?.stats.zygotePid === undefined, 5000)).toBe(true);
      expect(await eventually(() => !isAlive(zygote))).toBe(true);
      expect((await run(fixture.engine, ['echo', 'woken'])).output).toBe('woken\n');
    } finally {
      await fixture.dispose();
    }
  });

  it('R4.1: closing the engine stops the zygote and its warm shells', async () => {
    const fixture = await engineFixture({ noShellPool: false, poolSize: 3 });
    const zygote = fixture.engine.pool?.stats.zygotePid ?? 0;
    await run(fixture.engine, ['true']);
    const children = descendantsOf(zygote);
    expect(children.length).toBeGreaterThan(0);
    await fixture.dispose();
    expect(await eventually(() => !isAlive(zygote) && children.every((pid) => !isAlive(pid)))).toBe(
      true,
    );
  });
});

/** Running: a zombie counts as gone. */
function isAlive(pid: number): boolean {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== 'Z';
}
