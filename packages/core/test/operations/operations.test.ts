// SPEC §3 operations: unique ids, background runs that return at once, completion events, await and
// status, cancellation that kills the process tree, a bounded history, and a shutdown that leaves
// nothing behind. Real commands run through the engine's executor.
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../../src/engine.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AhmaError } from '../../src/errors.js';
import {
  OperationManager,
  type OperationSnapshot,
  type OperationTask,
} from '../../src/operations/operations.js';
import type { ExecutionResult } from '../../src/process/execution-types.js';
import {
  bash,
  engineFixture,
  removeAll,
  varTmpDir,
  eventually,
  markedProcesses,
  newMarker,
  run,
  sleep,
  survivors,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;

beforeAll(async () => {
  fixture = await engineFixture();
});

afterAll(() => fixture.dispose());

/** A task running argv through the engine's executor, cancellable through the operation. */
const command =
  (argv: readonly string[], timeoutMs?: number): OperationTask =>
  (signal, id) =>
    run(fixture.engine, argv, {
      signal,
      logName: id,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
    });

/** A result without a process, for bookkeeping tests that would otherwise spawn thousands. */
const synthetic = (output = ''): ExecutionResult => ({
  status: 'completed',
  exitCode: 0,
  signal: null,
  output,
  truncated: false,
  fullOutputPath: undefined,
  durationMs: 0,
});

function unknownError(action: () => unknown): AhmaError {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AhmaError);
  expect((caught as AhmaError).code).toBe('OPERATION_UNKNOWN');
  return caught as AhmaError;
}

const only = (snapshots: OperationSnapshot[]): OperationSnapshot => {
  expect(snapshots).toHaveLength(1);
  return snapshots[0] as OperationSnapshot;
};

describe('OperationManager: lifecycle', () => {
  it('SPEC §3: operation ids are unique (1000 starts, and across managers)', async () => {
    const manager = new OperationManager({ historyCount: 5000 });
    const other = new OperationManager();
    const ids = Array.from({ length: 1000 }, () => manager.start('t', async () => synthetic()).id);
    ids.push(other.start('t', async () => synthetic()).id);
    expect(new Set(ids).size).toBe(1001);
    for (const id of ids) expect(id).toMatch(/^op_[0-9a-f]+_\d+$/);
    const done = await manager.await(ids.slice(0, 1000));
    expect(done.every((snapshot) => snapshot.status === 'completed')).toBe(true);
  });

  it('SPEC §3: start returns at once with status running while the command runs', async () => {
    const operations = fixture.engine.operations;
    // At once: start answers synchronously, with the command still running (no clock: a loaded
    // machine makes any bound on its time flaky).
    const started = operations.start('sleep', command(['sleep', '1']));
    expect(started).not.toBeInstanceOf(Promise);
    expect(started).toMatchObject({
      tool: 'sleep',
      status: 'running',
      finishedAt: undefined,
      result: undefined,
    });
    expect(started.startedAt).toBeInstanceOf(Date);
    expect(only(operations.status([started.id])).status).toBe('running');

    const finished = only(await operations.await([started.id]));
    expect(finished.status).toBe('completed');
    expect(finished.result).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(finished.result?.durationMs).toBeGreaterThanOrEqual(900);
    expect(finished.finishedAt?.getTime()).toBeGreaterThanOrEqual(
      started.startedAt.getTime() + 900,
    );
  });

  it('SPEC §3: an onComplete listener gets the final snapshot exactly once; unsubscribe stops it', async () => {
    const operations = fixture.engine.operations;
    const seen: OperationSnapshot[] = [];
    const unsubscribe = operations.onComplete((snapshot) => seen.push(snapshot));
    const { id } = operations.start('echo', command(['echo', 'pushed result']));
    await operations.await([id]);
    await sleep(50);
    const mine = seen.filter((snapshot) => snapshot.id === id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      id,
      tool: 'echo',
      status: 'completed',
      result: { exitCode: 0, output: 'pushed result\n' },
    });
    expect(mine[0]?.finishedAt).toBeInstanceOf(Date);

    unsubscribe();
    const later = operations.start('echo', command(['echo', 'not pushed']));
    await operations.await([later.id]);
    await sleep(50);
    expect(seen.some((snapshot) => snapshot.id === later.id)).toBe(false);
  });

  it('SPEC §3: a failing command ends failed; a task that throws ends failed with its message', async () => {
    const operations = fixture.engine.operations;
    const failing = operations.start('false', command(bash('echo oops; exit 4')));
    const throwing = operations.start('bug', async () => {
      throw new Error('the task blew up');
    });
    const refused = operations.start('nul', command(['echo', 'a\0b']));
    const [a, b, c] = await operations.await([failing.id, throwing.id, refused.id]);
    expect(a).toMatchObject({ status: 'failed', result: { exitCode: 4, output: 'oops\n' } });
    expect(b).toMatchObject({
      status: 'failed',
      result: { status: 'failed', exitCode: null, output: 'the task blew up' },
    });
    expect(c?.status).toBe('failed');
    expect(c?.result?.output).toMatch(/NUL/);
  });
});

describe('OperationManager: listeners', () => {
  it('SPEC §3: a throwing completion listener is reported and does not stop the others', async () => {
    const errors: unknown[] = [];
    const operations = new OperationManager({ onListenerError: (error) => errors.push(error) });
    const seen: string[] = [];
    operations.onComplete(() => {
      throw new Error('listener bug');
    });
    operations.onComplete((snapshot) => seen.push(snapshot.status));
    const op = operations.start('echo', command(['echo', 'x']));
    await operations.await([op.id]);
    expect(seen).toEqual(['completed']);
    expect(errors).toEqual([new Error('listener bug')]);
  });

  it('SPEC §2 livelog: alert() reaches every alert listener while the operation runs, not after', async () => {
    const errors: unknown[] = [];
    const operations = new OperationManager({ onListenerError: (error) => errors.push(error) });
    const seen: string[] = [];
    operations.onAlert(() => {
      throw new Error('alert listener bug');
    });
    const unsubscribe = operations.onAlert((alert) =>
      seen.push(`${alert.operationId} ${alert.tool} ${alert.summary} ${alert.detail}`),
    );
    let release: () => void = () => undefined;
    const op = operations.start('monitor', async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return synthetic();
    });
    expect(operations.alert(op.id, 'panic seen', 'thread main panicked')).toBe(true);
    release();
    await operations.await([op.id]);
    expect(operations.alert(op.id, 'too late', '')).toBe(false);
    expect(operations.alert('op_nope_1', 'unknown', '')).toBe(false);
    unsubscribe();
    expect(seen).toEqual([`${op.id} monitor panic seen thread main panicked`]);
    expect(errors).toEqual([new Error('alert listener bug')]);
  });
});

describe('OperationManager: await and status', () => {
  it('R2.3: await(ids) blocks until every named operation is done', async () => {
    const operations = fixture.engine.operations;
    const before = performance.now();
    const short = operations.start('sleep', command(['sleep', '0.2']));
    const long = operations.start('sleep', command(['sleep', '0.5']));
    const results = await operations.await([short.id, long.id]);
    expect(performance.now() - before).toBeGreaterThanOrEqual(450);
    expect(results.map((snapshot) => [snapshot.id, snapshot.status])).toEqual([
      [short.id, 'completed'],
      [long.id, 'completed'],
    ]);
  });

  it('R2.3: await with a timeout returns the running snapshots when it passes', async () => {
    const operations = fixture.engine.operations;
    const marker = newMarker();
    const op = operations.start('sleep', command(bash(`exec -a ${marker} sleep 30`)));
    const before = performance.now();
    const snapshot = only(await operations.await([op.id], 200));
    const waited = performance.now() - before;
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(1500);
    expect(snapshot).toMatchObject({ id: op.id, status: 'running', result: undefined });
    // An aborted signal ends the wait the same way.
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(only(await operations.await([op.id], undefined, controller.signal)).status).toBe(
      'running',
    );
    operations.cancel(op.id);
    expect(only(await operations.await([op.id])).status).toBe('cancelled');
    expect(markedProcesses(marker)).toEqual([]);
  });

  it('R2.3: await() without ids waits for all running operations (and only those)', async () => {
    const manager = new OperationManager();
    const earlier = manager.start('echo', command(['true']));
    await manager.await([earlier.id]);
    const a = manager.start('sleep', command(['sleep', '0.2']));
    const b = manager.start('sleep', command(['sleep', '0.4']));
    const before = performance.now();
    const results = await manager.await();
    expect(performance.now() - before).toBeGreaterThanOrEqual(350);
    expect(results.map((snapshot) => snapshot.id)).toEqual([a.id, b.id]);
    expect(results.every((snapshot) => snapshot.status === 'completed')).toBe(true);
    // Nothing running: returns at once with nothing.
    expect(await manager.await()).toEqual([]);
  });

  it('SPEC §3: status() is non-blocking and lists known operations', async () => {
    const manager = new OperationManager();
    const done = manager.start('echo', command(['echo', 'done']));
    await manager.await([done.id]);
    const running = manager.start('sleep', command(['sleep', '0.5']));
    const before = performance.now();
    const all = manager.status();
    expect(performance.now() - before).toBeLessThan(50);
    expect(all.map((snapshot) => [snapshot.id, snapshot.status])).toEqual([
      [done.id, 'completed'],
      [running.id, 'running'],
    ]);
    expect(only(manager.status([done.id])).result?.output).toBe('done\n');
    await manager.await([running.id]);
  });

  it('SPEC §3: an unknown id → AhmaError OPERATION_UNKNOWN (status, await, cancel)', async () => {
    const operations = fixture.engine.operations;
    expect(unknownError(() => operations.status(['op_nope_1'])).message).toContain('op_nope_1');
    unknownError(() => operations.cancel('op_nope_2'));
    const rejected: unknown = await operations
      .await(['op_nope_3'])
      .catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(AhmaError);
    expect((rejected as AhmaError).code).toBe('OPERATION_UNKNOWN');
  });
});

describe('OperationManager: cancel', () => {
  it('SPEC §3: cancel(id, reason) kills the process tree and marks the operation cancelled', async () => {
    const operations = fixture.engine.operations;
    const marker = newMarker();
    const script = [
      `setsid bash -c 'exec -a ${marker}-daemon sleep 300' &`,
      `(exec -a ${marker}-job sleep 300) &`,
      `exec -a ${marker}-main sleep 300`,
    ].join('\n');
    const op = operations.start('sleep', command(bash(script)));
    const seen = await waitForMarked(marker, 3);
    expect(operations.cancel(op.id, 'the user changed their mind')).toBe(true);
    const snapshot = only(await operations.await([op.id], 10_000));
    expect(snapshot.status).toBe('cancelled');
    expect(snapshot.result).toMatchObject({ status: 'cancelled' });
    expect(snapshot.cancelReason).toBe('the user changed their mind');
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
    // A second cancel of the now finished operation changes nothing.
    expect(operations.cancel(op.id)).toBe(false);
    expect(only(operations.status([op.id])).status).toBe('cancelled');
  });

  it('SPEC §3: cancel of a finished operation returns false and keeps its result', async () => {
    const operations = fixture.engine.operations;
    const op = operations.start('echo', command(['echo', 'finished']));
    await operations.await([op.id]);
    expect(operations.cancel(op.id, 'too late')).toBe(false);
    expect(only(operations.status([op.id]))).toMatchObject({
      status: 'completed',
      result: { output: 'finished\n' },
    });
  });
});

describe('OperationManager: bounded history', () => {
  it('SPEC §3: historyCount bounds finished operations; the oldest are evicted, running ones kept', async () => {
    const manager = new OperationManager({ historyCount: 3 });
    const marker = newMarker();
    const longRunning = manager.start('sleep', command(bash(`exec -a ${marker} sleep 30`)));
    const finished: string[] = [];
    for (let i = 0; i < 5; i++) {
      const op = manager.start('echo', command(['echo', String(i)]));
      await manager.await([op.id]);
      finished.push(op.id);
    }
    const known = manager.status().map((snapshot) => snapshot.id);
    expect(known).toEqual([longRunning.id, ...finished.slice(2)]);
    for (const evicted of finished.slice(0, 2)) {
      expect(unknownError(() => manager.status([evicted])).message).toMatch(/history/);
    }
    expect(only(manager.status([longRunning.id])).status).toBe('running');
    manager.cancel(longRunning.id);
    await manager.await([longRunning.id]);
    expect(markedProcesses(marker)).toEqual([]);
  });

  it('SPEC §3: historyBytes bounds the output kept in the history', async () => {
    const manager = new OperationManager({ historyBytes: 25 });
    const ids: string[] = [];
    for (const word of ['aaaaaaaaa', 'bbbbbbbbb', 'ccccccccc', 'ddddddddd']) {
      const op = manager.start('echo', command(['echo', word]));
      await manager.await([op.id]);
      ids.push(op.id);
    }
    // 10 bytes each: only the newest two fit in 25.
    expect(manager.status().map((snapshot) => snapshot.id)).toEqual(ids.slice(2));
    unknownError(() => manager.status([ids[0] ?? '']));
    expect(manager.status([ids[3] ?? ''])[0]?.result?.output).toBe('ddddddddd\n');
  });
});

describe('Engine.close', () => {
  it("SPEC §4 Resources: close() removes the engine's private directory and its cache directory", async () => {
    const scope = await varTmpDir('scope');
    const root = await varTmpDir('root');
    const engine = await createEngine({ scope, stateDir: root, noShellPool: true });
    const { serverDir, cacheDir } = engine.state;
    expect(engine.sandbox.cacheRoot).toBe(cacheDir);
    expect([existsSync(serverDir), existsSync(cacheDir)]).toEqual([true, true]);
    await engine.close();
    expect([existsSync(serverDir), existsSync(cacheDir)]).toEqual([false, false]);
    await removeAll([scope, root]);
  });

  it('SPEC §3: close() cancels running operations, leaves no process, and refuses new starts', async () => {
    const own = await engineFixture();
    const marker = newMarker();
    const completions: OperationSnapshot[] = [];
    own.engine.operations.onComplete((snapshot) => completions.push(snapshot));
    const script = (role: string) =>
      bash(
        `setsid bash -c 'exec -a ${marker}-${role}-daemon sleep 300' & exec -a ${marker}-${role} sleep 300`,
      );
    const ids = ['a', 'b'].map(
      (role) =>
        own.engine.operations.start('sleep', (signal, id) =>
          run(own.engine, script(role), { signal, logName: id }),
        ).id,
    );
    try {
      const seen = await waitForMarked(marker, 4);
      const before = performance.now();
      await own.engine.close();
      expect(performance.now() - before).toBeLessThan(5000);
      expect(markedProcesses(marker)).toEqual([]);
      expect(survivors(seen)).toEqual([]);
      const statuses = own.engine.operations.status(ids).map((snapshot) => snapshot.status);
      expect(statuses).toEqual(['cancelled', 'cancelled']);
      expect(await eventually(() => completions.length === 2, 1000)).toBe(true);

      const refused = unknownError(() => own.engine.operations.start('echo', command(['true'])));
      expect(refused.message).toMatch(/shutting down/);
      await own.engine.close(); // idempotent
    } finally {
      await own.dispose();
    }
  });
});
