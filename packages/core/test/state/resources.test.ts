// SPEC §4 "Resources": full-output logs are deleted when their operation leaves the bounded history
// and when the engine closes, and all of them together stay under a disk budget — the oldest
// finished logs go first, a log that cannot fit is dropped, and no result names a log that is not
// there and whole. Real commands through the engine and the real sandbox.
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine.js';
import type { OperationSnapshot } from '../../src/operations/operations.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, outputBudgetBytes } from '../../src/process/output.js';
import { bash, engineFixture, eventually, run } from '../support/engine.js';

/** Truncated output: the budget + 4 KiB, so every such run writes a log of exactly this size. */
const BIG = outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS) + 4096;

/** Starts an operation printing `bytes` and waits for it; its finished snapshot. */
async function operation(engine: Engine, bytes = BIG): Promise<OperationSnapshot> {
  const started = engine.operations.start('sandboxed_shell', (signal, id) =>
    // Distinct lines: identical ones would collapse into a result within the budget.
    run(engine, bash(`seq 1 2000000 | head -c ${String(bytes)}`), { signal, logName: id }),
  );
  const [finished] = await engine.operations.await([started.id]);
  if (finished?.result === undefined) throw new Error('the operation did not finish');
  return finished;
}

const logOf = (snapshot: OperationSnapshot): string => {
  const path = snapshot.result?.fullOutputPath;
  if (path === undefined) throw new Error(`${snapshot.id} names no log`);
  return path;
};

async function diskUse(dir: string): Promise<number> {
  const names = await readdir(dir);
  const sizes = await Promise.all(names.map(async (name) => (await stat(join(dir, name))).size));
  return sizes.reduce((sum, size) => sum + size, 0);
}

describe('SPEC §4 Resources: output logs live as long as their operations', () => {
  it('SPEC §4 Resources: a log is deleted when its operation leaves the bounded history', async () => {
    const own = await engineFixture({ historyCount: 1 });
    try {
      const first = await operation(own.engine);
      const path = logOf(first);
      expect((await stat(path)).size).toBe(BIG);
      // One more finished operation: the first leaves the history of one, and its log with it.
      const second = await operation(own.engine);
      expect(own.engine.operations.status().map((snapshot) => snapshot.id)).toEqual([second.id]);
      expect(await eventually(() => !existsSync(path))).toBe(true);
      expect(existsSync(logOf(second))).toBe(true);
    } finally {
      await own.dispose();
    }
  });

  it("SPEC §4 Resources: close() deletes every log and the engine's directories", async () => {
    const own = await engineFixture();
    const path = logOf(await operation(own.engine));
    expect(existsSync(path)).toBe(true);
    await own.engine.close();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(own.engine.state.serverDir)).toBe(false);
    expect(existsSync(own.engine.state.cacheDir)).toBe(false);
    await own.dispose();
  });
});

describe('SPEC §4 Resources: a disk budget for all logs', () => {
  it('SPEC §4 Resources: past the budget the oldest finished logs are deleted, and their results stop naming them', async () => {
    // Room for two logs, not three.
    const own = await engineFixture({ logBudgetBytes: 2 * BIG + 1000 });
    try {
      const first = await operation(own.engine);
      const second = await operation(own.engine);
      const third = await operation(own.engine);
      const [firstPath, secondPath, thirdPath] = [first, second, third].map(logOf);
      expect(await eventually(() => !existsSync(firstPath ?? ''))).toBe(true);
      expect([existsSync(secondPath ?? ''), existsSync(thirdPath ?? '')]).toEqual([true, true]);
      expect(await diskUse(own.engine.state.logDir)).toBeLessThanOrEqual(2 * BIG + 1000);

      // Shown now, the first result no longer claims its log, and says what became of it.
      const [shown] = own.engine.operations.status([first.id]);
      expect(shown?.result?.fullOutputPath).toBeUndefined();
      expect(shown?.result?.truncated).toBe(true);
      expect(shown?.result?.output).not.toContain(firstPath);
      expect(shown?.result?.output).toMatch(
        /left out \(of \d+\); the full output log was deleted: output logs are kept within a .* disk budget/,
      );
      // The others are untouched.
      const [kept] = own.engine.operations.status([second.id]);
      expect(kept?.result?.fullOutputPath).toBe(secondPath);
      expect(kept?.result?.output).toContain(`full output: ${secondPath ?? ''}`);
    } finally {
      await own.dispose();
    }
  });

  it('SPEC §4 Resources: a log that cannot fit is dropped, and its result says the full output was not kept', async () => {
    const budget = 128 * 1024;
    const own = await engineFixture({ logBudgetBytes: budget });
    try {
      const earlier = await operation(own.engine);
      const huge = await operation(own.engine, 4 * 1024 * 1024);
      const result = huge.result;
      expect(result?.truncated).toBe(true);
      expect(result?.fullOutputPath).toBeUndefined();
      expect(result?.output).toMatch(
        /left out \(of 4194304\); the full output was not kept: it outgrew the 128 KiB disk budget for output logs/,
      );
      // While it grew it may have taken the older log's room (depending on how its output was
      // chunked): either way, what the older result shows now is true.
      const [shown] = own.engine.operations.status([earlier.id]);
      const named = shown?.result?.fullOutputPath;
      if (named === undefined) {
        expect(shown?.result?.output).toContain('the full output log was deleted');
      } else {
        expect((await stat(named)).size).toBe(BIG);
      }
      const names = await readdir(own.engine.state.logDir);
      expect(names.some((name) => name.startsWith(huge.id))).toBe(false);
      expect(await diskUse(own.engine.state.logDir)).toBeLessThanOrEqual(budget);
      expect(own.engine.logs.usedBytes).toBeLessThanOrEqual(budget);
      // A later, smaller log still gets written in full.
      const after = await operation(own.engine);
      expect((await stat(logOf(after))).size).toBe(BIG);
    } finally {
      await own.dispose();
    }
  });

  it('SPEC §4 Resources: a budget of 0 keeps no logs, and results never name one', async () => {
    const own = await engineFixture({ logBudgetBytes: 0 });
    try {
      const result = (await operation(own.engine)).result;
      expect(result?.fullOutputPath).toBeUndefined();
      expect(result?.output).toContain('the full output was not kept');
      expect(await readdir(own.engine.state.logDir)).toEqual([]);
    } finally {
      await own.dispose();
    }
  });
});
