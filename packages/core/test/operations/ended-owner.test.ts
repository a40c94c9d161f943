// R8.4 (issue 32): once the connection that started an operation has ended, the history keeps only
// a summary of its result: the end of each output after one line saying what was dropped, with the
// log that holds the whole output still named, its marker verbatim (so it is rewritten like any
// other once the log is deleted for the budget). Status, exit code and duration are untouched;
// another owner's operations are left whole.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'vitest';
import { OperationManager, type OperationTask } from '../../src/operations/operations.js';
import type { ExecutionResult, StepRecord } from '../../src/process/execution-types.js';
import {
  ENDED_OWNER_OUTPUT_BYTES,
  OutputCollector,
  presentLogs,
  summarizeResult,
} from '../../src/process/output.js';
import { LogStore } from '../../src/state/log-store.js';
import { removeAll, varTmpDir } from '../support/engine.js';

function result(output: string, extra: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    status: 'completed',
    exitCode: 0,
    signal: null,
    output,
    truncated: false,
    fullOutputPath: undefined,
    durationMs: 12,
    ...extra,
  };
}

/** `bytes` of 'a', then a recognisable last line. */
const long = (bytes: number, end: string) => `${'a'.repeat(bytes)}\n${end}\n`;

async function logStore(context: TestContext): Promise<LogStore> {
  const dir = await varTmpDir('ended-owner');
  context.onTestFinished(() => removeAll([dir]));
  const logDir = join(dir, 'logs');
  await mkdir(logDir, { mode: 0o700 });
  return new LogStore(logDir);
}

describe.concurrent('summarizeResult', () => {
  it('R8.4: an output within the bound is kept as it is', ({ expect }) => {
    const small = result(long(ENDED_OWNER_OUTPUT_BYTES - 100, 'end'));
    expect(summarizeResult(small)).toBe(small);
  });

  it('R8.4: a longer output keeps its end after a line saying what was dropped; status, exit code and duration stay', ({
    expect,
  }) => {
    const whole = result(long(20_000, 'the-end'), { status: 'failed', exitCode: 3 });
    const summary = summarizeResult(whole);
    expect(summary).toMatchObject({ status: 'failed', exitCode: 3, durationMs: 12 });
    expect(summary.truncated).toBe(true);
    expect(summary.fullOutputPath).toBeUndefined();
    expect(summary.output).toMatch(
      /^\[… \d+ bytes of this output dropped \(of 20009\): the session that started the operation has ended/,
    );
    expect(summary.output.endsWith('the-end\n')).toBe(true);
    expect(Buffer.byteLength(summary.output)).toBeLessThan(ENDED_OWNER_OUTPUT_BYTES + 200);
  });

  it("R8.4: an output whose log holds the whole keeps the log's marker verbatim, and is shown as any other once the log is deleted", async (context) => {
    const { expect } = context;
    const logs = await logStore(context);
    const collector = new OutputCollector({ budgetBytes: 17 * 1024, logs }, 'summarized');
    collector.push(Buffer.from(long(100_000, 'logged-end')));
    const collected = await collector.finish('completed');
    const whole = result(collected.output, {
      truncated: true,
      fullOutputPath: collected.fullOutputPath,
    });
    const marker =
      /\n\[… \d+ bytes \(\d+ lines?\) left out \(of \d+\); full output: [^\n]+ …\]\n/.exec(
        whole.output,
      )?.[0];
    expect(marker).toBeDefined();
    const summary = summarizeResult(whole);
    expect(summary.fullOutputPath).toBe(collected.fullOutputPath);
    expect(summary.output).toContain(marker);
    expect(summary.output.endsWith('logged-end\n')).toBe(true);
    expect(Buffer.byteLength(summary.output)).toBeLessThan(ENDED_OWNER_OUTPUT_BYTES + 400);
    // Its log deleted for the budget: the marker is rewritten, the path no longer named.
    const path = collected.fullOutputPath ?? '';
    const deleted = {
      deletedNotes: (asked: string) =>
        asked === path
          ? { marker: marker ?? '', replacement: '\n[the log was deleted]\n' }
          : undefined,
    } as unknown as LogStore;
    const shown = presentLogs(summary, deleted);
    expect(shown.fullOutputPath).toBeUndefined();
    expect(shown.output).not.toContain(path);
    expect(shown.output).toContain('[the log was deleted]');
  });

  it("R8.4: a sequence's step outputs are summarized too", ({ expect }) => {
    const step: StepRecord = {
      step: 1,
      label: 'build',
      argv: ['make'],
      command: { kind: 'argv', argv: ['make'] },
      cwd: '/',
      status: 'completed',
      exitCode: 0,
      startedAt: undefined,
      finishedAt: undefined,
      durationMs: 1,
      output: long(20_000, 'step-end'),
      truncated: false,
      fullOutputPath: undefined,
    };
    const summary = summarizeResult(result(long(20_000, 'transcript-end'), { steps: [step] }));
    const [summarized] = summary.steps ?? [];
    expect(summarized?.truncated).toBe(true);
    expect(summarized?.output.endsWith('step-end\n')).toBe(true);
    expect(Buffer.byteLength(summarized?.output ?? '')).toBeLessThan(
      ENDED_OWNER_OUTPUT_BYTES + 200,
    );
  });
});

describe.concurrent('OperationManager.ownerEnded', () => {
  /** A task that ends when `release` is called, printing `output`. */
  function controlled(output: string): { task: OperationTask; release: () => void } {
    let release: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => (release = resolve));
    return { task: () => ended.then(() => result(output)), release };
  }

  it("R8.4: an ended owner's finished operations are summarized at once, its running ones when they end; another owner's stay whole", async ({
    expect,
  }) => {
    const operations = new OperationManager({}, { summarize: (r) => summarizeResult(r) });
    const big = long(20_000, 'end');
    const finished = operations.start('t', () => Promise.resolve(result(big)), { owner: 'a' });
    const running = controlled(big);
    const later = operations.start('t', running.task, { owner: 'a' });
    const others = operations.start('t', () => Promise.resolve(result(big)), { owner: 'b' });
    const unowned = operations.start('t', () => Promise.resolve(result(big)));
    await operations.await([finished.id, others.id, unowned.id]);

    operations.ownerEnded('a');
    const [now] = operations.status([finished.id]);
    expect(now?.result?.truncated).toBe(true);
    expect(now?.result?.output.endsWith('end\n')).toBe(true);
    expect(Buffer.byteLength(now?.result?.output ?? '')).toBeLessThan(
      ENDED_OWNER_OUTPUT_BYTES + 200,
    );
    running.release();
    const [ended] = await operations.await([later.id]);
    expect(ended?.result?.truncated).toBe(true);
    expect(Buffer.byteLength(ended?.result?.output ?? '')).toBeLessThan(
      ENDED_OWNER_OUTPUT_BYTES + 200,
    );
    for (const [snapshot] of [operations.status([others.id]), operations.status([unowned.id])]) {
      expect(snapshot?.result?.output).toBe(big);
    }
  });
});
