// R7.6: timeouts and cancel hold even when the processes that should carry them out do not answer
// (the pool's zygote or a command's supervisor stopped or wedged): the server's watchdog kills the
// tree itself, restarts the pool and says so. Also what the pool reports: the zygote's own
// diagnostics, its restarts, the moment it gives up, and why a command died by a signal.
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { childrenOf, commOf, sessionOf } from '../support/sandbox-helper.js';
import {
  bash,
  engineFixture,
  eventually,
  newMarker,
  procStat,
  run,
  sleep,
  survivors,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

/** A logger that remembers what it was told. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (line) => lines.push(line), warn: (line) => lines.push(line) };
}

/**
 * Every step of stopping a command made short (the defaults add up to 6 s; process/timings.ts):
 * each wait here is for a process the test stopped, so none can end early by being short.
 */
const QUICK_STOPS = { graceMs: 200, backstopSlackMs: 300, watchdogMs: 500, zygoteAnswerMs: 300 };

let fixtures: EngineFixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.map((fixture) => fixture.dispose()));
  fixtures = [];
});

async function pooledEngine(logger: Logger) {
  const fixture = await engineFixture({
    noShellPool: false,
    poolSize: 1,
    timings: QUICK_STOPS,
    logger,
  });
  fixtures.push(fixture);
  // Ready: a command has gone through the zygote.
  expect(await run(fixture.engine, ['true'])).toMatchObject({ status: 'completed' });
  return fixture;
}

const zygoteOf = (fixture: EngineFixture) => {
  const pid = fixture.engine.pool?.stats.zygotePid;
  if (pid === undefined) throw new Error('no zygote');
  return pid;
};

describe('R7.6: the watchdog', () => {
  it('R7.6: a stopped zygote cannot keep a command past its timeout: the server kills it, restarts the pool and says so', async () => {
    const logger = recordingLogger();
    const fixture = await pooledEngine(logger);
    const zygote = zygoteOf(fixture);
    const marker = newMarker();
    const running = run(fixture.engine, bash(`exec -a ${marker} sleep 60`), { timeoutMs: 500 });
    const seen = await waitForMarked(marker, 1);
    process.kill(zygote, 'SIGSTOP'); // what a hostile command could do before per-command domains
    const started = Date.now();
    const result = await running;
    // timeout 0.5 s + grace 0.2 s + backstop 0.3 s + watchdog 0.5 s + the zygote's 0.3 s to answer
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ status: 'timed_out', exitCode: null });
    expect(result.output).toMatch(/supervisor did not end it .* the server killed its processes/);
    expect(await eventually(() => survivors(seen).length === 0)).toBe(true);
    expect(await eventually(() => procStat(zygote) === undefined)).toBe(true);
    expect(logger.lines.join('\n')).toMatch(/zygote \(pid \d+\) did not answer; killing it/);
    // The next command runs, in a new pool.
    expect(await run(fixture.engine, ['echo', 'again'])).toMatchObject({ output: 'again\n' });
    expect(await eventually(() => fixture.engine.pool?.stats.zygotePid !== undefined)).toBe(true);
    expect(zygoteOf(fixture)).not.toBe(zygote);
  });

  it('R7.6: cancel holds too, and the other commands of a wedged pool end with the reason instead of hanging', async () => {
    const fixture = await pooledEngine(recordingLogger());
    const zygote = zygoteOf(fixture);
    const marker = newMarker();
    const controller = new AbortController();
    const cancelled = run(fixture.engine, bash(`exec -a ${marker} sleep 60`), {
      signal: controller.signal,
    });
    const bystander = run(fixture.engine, bash(`exec -a ${marker} sleep 60`));
    const seen = await waitForMarked(marker, 2);
    process.kill(zygote, 'SIGSTOP');
    controller.abort();
    expect(await cancelled).toMatchObject({ status: 'cancelled' });
    const other = await bystander;
    expect(other.status).toBe('failed');
    expect(other.output).toMatch(/shell pool stopped answering and was restarted/);
    expect(await eventually(() => survivors(seen).length === 0)).toBe(true);
  });

  it('R7.6: a stopped supervisor of a direct spawn cannot keep its command past the timeout either', async () => {
    const fixture = await engineFixture({ noShellPool: true, timings: QUICK_STOPS });
    fixtures.push(fixture);
    const marker = newMarker();
    const running = run(
      fixture.engine,
      bash(`setsid bash -c 'exec -a ${marker} sleep 60' & wait`),
      {
        timeoutMs: 500,
      },
    );
    const seen = await waitForMarked(marker, 1);
    // The helper (the supervisor) is the daemon's nearest ahma-sandbox ancestor: stop it.
    let helper = seen[0]?.pid;
    while (helper !== undefined && commOf(helper) !== 'ahma-sandbox')
      helper = procStat(helper)?.ppid;
    if (helper === undefined) throw new Error('no supervisor');
    process.kill(helper, 'SIGSTOP');
    const result = await running;
    expect(result.status).toBe('timed_out');
    expect(result.output).toMatch(/the server killed its processes itself/);
    expect(await eventually(() => survivors(seen).length === 0)).toBe(true);
  });
});

describe('what the pool reports', () => {
  it("R7.6: the zygote's diagnostics reach the log (a warm shell killed while idle)", async () => {
    const logger = recordingLogger();
    const fixture = await pooledEngine(logger);
    const zygote = zygoteOf(fixture);
    // A unit's supervisor leads a session of its own (the template shell does not).
    const [unit] = childrenOf(zygote).filter((pid) => sessionOf(pid) === pid);
    if (unit === undefined) throw new Error('no warm unit');
    process.kill(unit, 'SIGKILL');
    expect(
      await eventually(() =>
        logger.lines.some((line) => /^shell pool: .*died while idle/.test(line)),
      ),
    ).toBe(true);
  });

  it('R7.6: a zygote that dies is logged, and the pool that gives up after three says so', async () => {
    const logger = recordingLogger();
    const fixture = await pooledEngine(logger);
    for (let death = 1; death <= 3; death++) {
      const zygote = zygoteOf(fixture);
      process.kill(zygote, 'SIGKILL');
      expect(await eventually(() => fixture.engine.pool?.stats.zygotePid === undefined)).toBe(true);
      // The next command is spawned directly and starts a new zygote (until the pool gives up).
      expect(await run(fixture.engine, ['true'])).toMatchObject({ status: 'completed' });
      if (death < 3) {
        expect(
          await eventually(() => fixture.engine.pool?.stats.zygotePid !== undefined, 5_000),
        ).toBe(true);
        expect(await run(fixture.engine, ['true'])).toMatchObject({ status: 'completed' });
      }
    }
    const text = logger.lines.join('\n');
    expect(text).toMatch(/the zygote died; it is started again/);
    expect(text).toMatch(/shell pool disabled: the pool zygote died 3 times in a row/);
    expect(fixture.engine.pool?.stats.disabledReason).toBeDefined();
  });

  it('SPEC §3: a command killed by a signal says so in its output', async () => {
    const fixture = await pooledEngine(recordingLogger());
    const result = await run(fixture.engine, { kind: 'shell', script: 'kill -KILL $$' });
    expect(result).toMatchObject({ status: 'failed', exitCode: null, signal: 'SIGKILL' });
    expect(result.output).toBe('ahma: the command was killed by SIGKILL\n');
  });

  it('R4.1: many pooled commands with large outputs raise no MaxListenersExceededWarning', async () => {
    const fixture = await pooledEngine(recordingLogger());
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          run(fixture.engine, { kind: 'shell', script: 'head -c 30000000 /dev/zero' }),
        ),
      );
      expect(results.map((result) => result.status)).toEqual(Array(6).fill('completed'));
      await sleep(100); // warnings are emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  });
});
