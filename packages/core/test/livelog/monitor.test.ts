// The livelog monitor with a real source in the real sandbox, through the engine's executor and
// operations (SPEC §2 Compatibility, livelog). The detector is the injected one (ARCHITECTURE:
// "the detector can be faked in unit tests"), scripted per chunk; the OpenAI-compatible client is
// tested against a real HTTP endpoint end to end (shell-server e2e livelog.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LivelogSettings } from '../../src/definition/livelog-settings.js';
import { DetectorError, type Detector, type Verdict } from '../../src/livelog/detector.js';
import { MAX_PENDING_CHUNKS } from '../../src/livelog/monitor.js';
import { resolveLivelogStart } from '../../src/livelog/start.js';
import { livelogTask } from '../../src/livelog/task.js';
import type { OperationAlert, OperationSnapshot } from '../../src/operations/operations.js';
import {
  engineFixture,
  eventually,
  newMarker,
  survivors,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;
beforeAll(async () => {
  fixture = await engineFixture();
});
afterAll(() => fixture.dispose());

const settings = (script: string, overrides: Partial<LivelogSettings> = {}): LivelogSettings => ({
  sourceCommand: 'bash',
  sourceArgs: ['--noprofile', '--norc', '-c', script],
  detectionPrompt: 'Look for PANIC.',
  baseUrl: 'http://127.0.0.1:9/v1',
  model: 'test-model',
  apiKeyVariable: undefined,
  chunkMaxLines: 1,
  chunkMaxSeconds: 30,
  cooldownSeconds: 0,
  llmTimeoutSeconds: 5,
  parameters: [],
  env: {},
  clearArgs: undefined,
  prefilter: undefined,
  ...overrides,
});

/** Answers by the chunk's content: an issue for PANIC, CLEAN otherwise; records every chunk. */
function scripted(answer?: (chunk: string, index: number) => Promise<Verdict>): {
  detector: Detector;
  chunks: string[];
} {
  const chunks: string[] = [];
  return {
    chunks,
    detector: {
      check: (chunk) => {
        chunks.push(chunk);
        if (answer !== undefined) return answer(chunk, chunks.length - 1);
        return Promise.resolve(
          chunk.includes('PANIC')
            ? { clean: false, summary: `panic in: ${chunk}` }
            : { clean: true },
        );
      },
    },
  };
}

/** Starts a livelog operation; collects its alerts. */
function start(livelog: LivelogSettings, detector: Detector) {
  const { engine } = fixture;
  const alerts: OperationAlert[] = [];
  const stop = engine.operations.onAlert((alert) => alerts.push(alert));
  const operation = engine.operations.start(
    'watch',
    livelogTask({
      executor: engine.executor,
      operations: engine.operations,
      settings: livelog,
      start: resolveLivelogStart(livelog, {}, {}),
      cwd: engine.sandbox.scope,
      env: {},
      detector,
    }),
  );
  const mine = () => alerts.filter((alert) => alert.operationId === operation.id);
  const finished = async (): Promise<OperationSnapshot> => {
    const [snapshot] = await engine.operations.await([operation.id], 60_000);
    stop();
    if (snapshot?.result === undefined) throw new Error('the operation did not finish');
    return snapshot;
  };
  return { operation, alerts: mine, finished };
}

describe('livelog monitor', () => {
  it('SPEC §2 livelog: an issue is raised as an alert of the operation with its chunk; the result keeps the output and counts', async () => {
    const { detector, chunks } = scripted();
    const run = start(settings('echo fine; echo PANIC at line 2; echo fine again'), detector);
    const done = await run.finished();
    expect(chunks).toEqual(['fine', 'PANIC at line 2', 'fine again']);
    expect(run.alerts().map((a) => [a.tool, a.summary, a.detail])).toEqual([
      ['watch', 'panic in: PANIC at line 2', 'PANIC at line 2'],
    ]);
    expect(done.status).toBe('completed');
    expect(done.result?.output).toBe(
      'fine\nPANIC at line 2\nfine again\nahma livelog: 3 chunks checked by test-model at http://127.0.0.1:9/v1; 1 issue found; 1 alert raised\n',
    );
  });

  it('SPEC §2 livelog: at most one alert per cooldown; issues found meanwhile come as one alert when it ends', async () => {
    const { detector, chunks } = scripted();
    const run = start(
      settings('echo PANIC 1; echo PANIC 2; echo PANIC 3; sleep 4', { cooldownSeconds: 2 }),
      detector,
    );
    expect(await eventually(() => chunks.length === 3, 10_000)).toBe(true);
    expect(run.alerts().map((a) => a.detail)).toEqual(['PANIC 1']);
    // The held issues are raised once the cooldown ends, while the source still runs.
    expect(await eventually(() => run.alerts().length === 2, 10_000)).toBe(true);
    const second = run.alerts()[1];
    expect(second?.summary).toBe(
      'panic in: PANIC 3 (the latest of 2 issues found during the alert cooldown)',
    );
    expect(second?.detail).toBe('PANIC 3');
    const done = await run.finished();
    expect(run.alerts()).toHaveLength(2);
    expect(done.result?.output).toContain('3 issues found; 2 alerts raised\n');
  });

  it('SPEC §2 livelog: issues still held in the cooldown when the source ends are counted, not lost silently', async () => {
    const { detector } = scripted();
    const run = start(settings('echo PANIC 1; echo PANIC 2', { cooldownSeconds: 600 }), detector);
    const done = await run.finished();
    expect(run.alerts()).toHaveLength(1);
    expect(done.result?.output).toContain(
      '2 issues found; 1 alert raised; 1 issue found during the last cooldown not raised\n',
    );
  });

  it('SPEC §2 livelog: a failing endpoint is reported once, retried with later chunks, and reported again only after a success', async () => {
    // Chunks 0-2 fail, 3 succeeds (re-arms), 4-5 fail.
    const { detector, chunks } = scripted((chunk, index) =>
      index === 3
        ? Promise.resolve({ clean: true })
        : Promise.reject(new DetectorError(`endpoint down (chunk ${String(index)})`)),
    );
    const run = start(settings('for i in 0 1 2 3 4 5; do echo line $i; sleep 0.2; done'), detector);
    const done = await run.finished();
    expect(chunks).toHaveLength(6);
    expect(run.alerts().map((a) => [a.summary.split('. The source')[0], a.detail])).toEqual([
      ['livelog cannot check the output: endpoint down (chunk 0)', 'line 0'],
      ['livelog cannot check the output: endpoint down (chunk 4)', 'line 4'],
    ]);
    expect(done.status).toBe('completed');
    expect(done.result?.output).toContain(
      '1 chunk checked by test-model at http://127.0.0.1:9/v1; 0 issues found; 0 alerts raised; 5 chunks not checked: the endpoint failed (last: endpoint down (chunk 5))',
    );
  });

  it('SPEC §2 livelog: a slow endpoint never blocks the source; waiting chunks are bounded and the dropped ones counted', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { detector, chunks } = scripted(async () => {
      await gate;
      return { clean: true };
    });
    const run = start(
      settings('for i in $(seq 1 40); do echo line $i; done; echo source done'),
      detector,
    );
    // The source ends while the first chunk is still in the endpoint's hands.
    const { engine } = fixture;
    expect(
      await eventually(
        () =>
          engine.operations.status([run.operation.id])[0]?.status === 'running' &&
          chunks.length === 1,
      ),
    ).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    release();
    const done = await run.finished();
    // One in flight, MAX_PENDING_CHUNKS waiting, the rest dropped oldest first.
    expect(chunks).toHaveLength(1 + MAX_PENDING_CHUNKS);
    expect(chunks.at(-1)).toBe('source done');
    expect(done.result?.output).toContain('line 40\nsource done\n');
    expect(done.result?.output).toContain(
      `${String(41 - 1 - MAX_PENDING_CHUNKS)} chunks dropped unchecked (the endpoint was slower than the source)`,
    );
  });

  it('SPEC §3 cancel: cancelling a livelog operation kills its source tree and ends it cancelled with the counts', async () => {
    const marker = newMarker();
    const { detector } = scripted();
    const run = start(
      settings(
        `setsid bash -c 'exec -a ${marker}-grandchild sleep 300' </dev/null >/dev/null 2>&1 & echo started; exec -a ${marker}-child sleep 300`,
        { chunkMaxLines: 50, chunkMaxSeconds: 1 },
      ),
      detector,
    );
    const seen = await waitForMarked(marker, 2);
    fixture.engine.operations.cancel(run.operation.id, 'test');
    const done = await run.finished();
    expect(done.status).toBe('cancelled');
    expect(done.result?.output).toMatch(/^started\nahma livelog: [01] chunks? checked/);
    expect(survivors(seen)).toEqual([]);
  });
});
