// The monitor with upstream ahma-labs' keys, real sources in the real sandbox through the engine's
// executor (SPEC §2 Compatibility, livelog): the clear run before the source (same executor, env
// and cancel), the call's env, and the prefilter deciding which lines the detector sees.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveLivelog } from '../../src/definition/livelog-settings.js';
import type { LivelogDefinition } from '../../src/definition/livelog-schema.js';
import type { Detector } from '../../src/livelog/detector.js';
import { resolveLivelogStart } from '../../src/livelog/start.js';
import { livelogTask } from '../../src/livelog/task.js';
import type { ExecutionResult } from '../../src/process/execution-types.js';
import {
  engineFixture,
  newMarker,
  removeAll,
  varTmpDir,
  survivors,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;
beforeAll(async () => {
  fixture = await engineFixture();
});
afterAll(() => fixture.dispose());

/** A livelog definition whose source is `bash -c script` (one chunk per line). */
const definition = (script: string, more: Partial<LivelogDefinition> = {}): LivelogDefinition => ({
  source_command: 'bash',
  source_args: ['--noprofile', '--norc', '-c', script],
  detection_prompt: 'Look for PANIC.',
  llm_provider: { base_url: 'http://127.0.0.1:9/v1', model: 'test-model' },
  chunk_max_lines: 1,
  cooldown_seconds: 0,
  ...more,
});

/** Runs a monitor to its end; the chunks the detector saw, the clear runs, the result. */
async function monitor(livelog: LivelogDefinition, args: Record<string, unknown> = {}) {
  const { engine } = fixture;
  const chunks: string[] = [];
  const detector: Detector = {
    check: (chunk) => {
      chunks.push(chunk);
      return Promise.resolve({ clean: true });
    },
  };
  const clears: { argv: readonly string[]; result: ExecutionResult }[] = [];
  const settings = resolveLivelog(livelog);
  const operation = engine.operations.start(
    'watch',
    livelogTask({
      executor: engine.executor,
      operations: engine.operations,
      settings,
      start: resolveLivelogStart(settings, args, {}),
      cwd: engine.sandbox.scope,
      env: {},
      detector,
      onClear: (argv, result) => clears.push({ argv, result }),
    }),
  );
  const finished = async () => {
    const [snapshot] = await engine.operations.await([operation.id], 60_000);
    if (snapshot?.result === undefined) throw new Error('the operation did not finish');
    return snapshot;
  };
  return { operation, chunks, clears, finished };
}

describe('livelog monitor: upstream keys', () => {
  it('SPEC §2 livelog: clear_command runs once, before the source, with the call env; its output is not checked', async () => {
    const file = `cleared-${newMarker()}.txt`;
    const run = await monitor(
      definition(`cat ${file}; echo "serial=$ANDROID_SERIAL"`, {
        parameters: [{ name: 'serial', description: 'Device serial.' }],
        env: { ANDROID_SERIAL: '${serial}' },
        clear_command: [
          '--noprofile',
          '--norc',
          '-c',
          `echo "cleared $ANDROID_SERIAL" >> ${file}; echo clear-output`,
        ],
      }),
      { serial: 'emulator-5554' },
    );
    const done = await run.finished();
    // The source saw what the clear run wrote: it ran first, and once.
    expect(run.chunks).toEqual(['cleared emulator-5554', 'serial=emulator-5554']);
    expect(await readFile(join(fixture.scope, file), 'utf8')).toBe('cleared emulator-5554\n');
    expect(run.clears.map((c) => [c.argv.at(-1), c.result.status])).toEqual([
      [`echo "cleared $ANDROID_SERIAL" >> ${file}; echo clear-output`, 'completed'],
    ]);
    expect(done.status).toBe('completed');
    expect(done.result?.output).not.toContain('clear-output');
  });

  it('SPEC §2 livelog: a failing clear_command is reported in the result and the source still starts (best effort, as upstream)', async () => {
    const run = await monitor(
      definition('echo source ran', {
        clear_command: ['--noprofile', '--norc', '-c', 'echo no device attached >&2; exit 3'],
      }),
    );
    const done = await run.finished();
    expect(run.chunks).toEqual(['source ran']);
    expect(done.status).toBe('completed');
    expect(done.result?.output).toContain(
      'ahma livelog: clear_command (bash --noprofile --norc -c echo no device attached >&2; exit 3) failed (exit 3): no device attached; the source was started anyway\n',
    );
  });

  it('R7 livelog: clear_command runs confined like the source: it cannot write outside the scope', async () => {
    const outside = await varTmpDir('outside');
    try {
      const run = await monitor(
        definition('echo source ran', {
          clear_command: ['--noprofile', '--norc', '-c', `echo x > ${outside}/escaped.txt`],
        }),
      );
      const done = await run.finished();
      expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
      expect(run.clears.map((c) => c.result.status)).toEqual(['failed']);
      expect(done.result?.output).toMatch(
        /clear_command \(.*\) failed \(exit 1\): .*Permission denied/,
      );
      expect(run.chunks).toEqual(['source ran']);
    } finally {
      await removeAll([outside]);
    }
  });

  it('SPEC §3 cancel: cancelling while clear_command runs kills it; the source never starts', async () => {
    const marker = newMarker();
    const run = await monitor(
      definition(`exec -a ${marker}-source sleep 300`, {
        clear_command: ['--noprofile', '--norc', '-c', `exec -a ${marker}-clear sleep 300`],
      }),
    );
    const seen = await waitForMarked(`${marker}-clear`);
    fixture.engine.operations.cancel(run.operation.id, 'test');
    const done = await run.finished();
    expect(done.status).toBe('cancelled');
    expect(survivors(seen)).toEqual([]);
    expect(run.clears.map((c) => c.result.status)).toEqual(['cancelled']);
    expect(run.chunks).toEqual([]);
  });

  it('SPEC §2 livelog: prefilter_regex: only matching lines reach the detector; the result keeps every line and counts them', async () => {
    const run = await monitor(
      definition(
        'echo "I/Boot: ok"; echo "E/Crash: FATAL EXCEPTION"; echo "D/Net: fine"; echo "E/App: oops"; echo "I/Done: bye"',
        { prefilter_regex: '(?i)(fatal|^E/)' },
      ),
    );
    const done = await run.finished();
    expect(run.chunks).toEqual(['E/Crash: FATAL EXCEPTION', 'E/App: oops']);
    expect(done.result?.output).toBe(
      'I/Boot: ok\nE/Crash: FATAL EXCEPTION\nD/Net: fine\nE/App: oops\nI/Done: bye\nahma livelog: 2 of 5 lines passed prefilter_regex; 2 chunks checked by test-model at http://127.0.0.1:9/v1; 0 issues found; 0 alerts raised\n',
    );
  });
});
