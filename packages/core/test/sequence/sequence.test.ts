// Sequences in core (SPEC §9, R6.1–R6.3, R10.3): planning a call (step tools by name, arguments
// merged and validated up front, the caller's working directory, nested sequences) and running the
// plans through a real engine (order, first failure stops, refusals, delay, cancel, timeouts).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../../src/definition/input-schema.js';
import { loadTools, type LoadedTool } from '../../src/definition/load.js';
import { AhmaError } from '../../src/errors.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, outputBudgetBytes } from '../../src/process/output.js';
import { planSequence } from '../../src/sequence/plan.js';
import { runSequence, type StepPlan } from '../../src/sequence/run-sequence.js';
import { engineFixture, type EngineFixture } from '../support/engine.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

let fixture: EngineFixture;
beforeAll(async () => {
  fixture = await engineFixture();
  await mkdir(join(fixture.scope, 'sub'));
});
afterAll(() => fixture.dispose());

/** A tool as the loader makes it, for planning: `echo` with an option and a positional. */
async function toolsOf(dir: string): Promise<Map<string, LoadedTool>> {
  const loaded = await loadTools({ toolsDir: { dir, origin: 'option' } });
  expect(loaded.diagnostics).toEqual([]);
  return new Map(loaded.tools.map((tool) => [tool.name, tool]));
}

const shellPlan = (label: string, script: string): StepPlan => ({
  label,
  prepare: () =>
    Promise.resolve({
      command: { kind: 'shell', script },
      argv: ['bash', '-c', script],
      cwd: fixture.scope,
      timeoutMs: 10_000,
      cleanup: () => Promise.resolve(),
    }),
});

const run = (
  plans: StepPlan[],
  options: {
    delayMs?: number;
    timeoutMs?: number;
    signal?: AbortSignal;
    logName?: string;
    maxOutputTokens?: number;
  } = {},
) =>
  runSequence(plans, {
    executor: fixture.engine.executor,
    delayMs: options.delayMs ?? 0,
    timeoutMs: options.timeoutMs,
    signal: options.signal ?? new AbortController().signal,
    logName: options.logName ?? `seq-${String(Date.now())}`,
    maxOutputTokens: options.maxOutputTokens,
  });

describe('planSequence', () => {
  it("R6.2: this repository's qualitycheck runs lint, typecheck, test and build, in that order", async () => {
    const tools = await toolsOf(join(repoRoot, '.ahma', 'tools'));
    const leaf = tools.get('ahma_qualitycheck')?.leaf;
    if (leaf === undefined) throw new Error('no ahma_qualitycheck');
    expect(leaf.synchronous).toBe(false); // one async operation: it takes minutes
    const plans = await planSequence(
      leaf,
      {},
      {
        tools,
        validator: new ArgumentValidator(),
        scope: repoRoot,
        defaultTimeoutSeconds: 600,
      },
    );
    const prepared = await Promise.all(plans.map((plan) => plan.prepare()));
    expect(prepared.map((step) => step.argv)).toEqual([
      ['pnpm', 'lint'],
      ['pnpm', 'typecheck'],
      ['pnpm', 'test'],
      ['pnpm', 'build'],
    ]);
    expect(prepared.map((step) => step.cwd)).toEqual([repoRoot, repoRoot, repoRoot, repoRoot]);
  });

  it("R10.3: a step refused by its tool's schema refuses the plan, naming the step", async () => {
    const tools = await toolsOf(join(repoRoot, '.ahma', 'tools'));
    const lint = tools.get('ahma_lint');
    if (lint === undefined) throw new Error('no ahma_lint');
    const leaf = {
      ...lint.leaf,
      name: 'bad',
      sequence: [{ tool: 'ahma', subcommand: 'lint', args: { nope: 1 } }],
    };
    const error: unknown = await planSequence(
      leaf,
      {},
      {
        tools,
        validator: new ArgumentValidator(),
        scope: repoRoot,
        defaultTimeoutSeconds: 600,
      },
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(AhmaError);
    expect((error as AhmaError).message).toMatch(
      /^bad step 1 \(ahma_lint\): unknown argument "nope"/,
    );
  });
});

describe('planSequence: argv checked up front', () => {
  it('R6.2: a step whose positional would reach its program as an option refuses the plan; its real preparation decides', async () => {
    const dir = join(fixture.scope, 'dash-tools');
    await mkdir(dir);
    await writeFile(
      join(dir, 'show.json'),
      JSON.stringify({
        name: 'show',
        description: 'Echo a word and a note.',
        command: 'echo',
        subcommand: [
          {
            name: 'default',
            description: 'Echo them.',
            positional_args: [
              { name: 'word', type: 'string' },
              { name: 'note', type: 'string', file_arg: true },
            ],
          },
        ],
      }),
    );
    await writeFile(
      join(dir, 'pair.json'),
      JSON.stringify({
        name: 'pair',
        description: 'Two steps.',
        command: 'sequence',
        sequence: [
          { tool: 'sandboxed_shell', args: { command: 'touch ran' } },
          { tool: 'show', args: { word: '--output=x' } },
        ],
      }),
    );
    const tools = await toolsOf(dir);
    const context = {
      tools,
      validator: new ArgumentValidator(),
      scope: fixture.scope,
      defaultTimeoutSeconds: 60,
    };
    const pair = tools.get('pair')?.leaf;
    const show = tools.get('show')?.leaf;
    if (pair === undefined || show === undefined) throw new Error('tools missing');
    await expect(planSequence(pair, {}, context)).rejects.toThrow(
      /^pair step 2 \(show\): argument "word": "--output=x" starts with "-"/,
    );
    // A file_arg value is replaced by its temporary file's path, so its text may start with "-".
    const note = { ...pair, sequence: [{ tool: 'show', args: { word: 'w', note: '-n' } }] };
    expect(await planSequence(note, {}, context)).toHaveLength(1);
  });
});

describe('planSequence: nested sequences', () => {
  it('R6.1: a step that calls a sequence runs its steps in place, checked against its own schema', async () => {
    const dir = join(fixture.scope, 'nested-tools');
    await mkdir(dir);
    const write = (name: string, definition: unknown) =>
      writeFile(join(dir, `${name}.json`), JSON.stringify(definition));
    await write('inner', {
      name: 'inner',
      description: 'Two steps.',
      command: 'sequence',
      subcommand: [
        {
          name: 'run',
          description: 'Run them.',
          options: [{ name: 'command', type: 'string', required: true }],
        },
      ],
      sequence: [
        { tool: 'sandboxed_shell' },
        { tool: 'sandboxed_shell', args: { command: 'echo two' } },
      ],
    });
    await write('outer', {
      name: 'outer',
      description: 'Calls inner.',
      command: 'sequence',
      subcommand: [
        {
          name: 'run',
          description: 'Run it.',
          options: [{ name: 'command', type: 'string' }],
        },
      ],
      sequence: [{ tool: 'inner', subcommand: 'run', description: 'the inner one' }],
    });
    const tools = await toolsOf(dir);
    const outer = tools.get('outer_run')?.leaf;
    if (outer === undefined) throw new Error('no outer_run');
    const context = {
      tools,
      validator: new ArgumentValidator(),
      scope: fixture.scope,
      defaultTimeoutSeconds: 60,
    };
    const plans = await planSequence(outer, { command: 'echo one' }, context);
    expect(plans.map((plan) => plan.label)).toEqual([
      'inner_run — the inner one › sandboxed_shell',
      'inner_run — the inner one › sandboxed_shell',
    ]);
    const result = await run(plans);
    expect(result.output).toMatch(/one\n[^]*two\n/);
    // Without the inner sequence's required argument, nothing runs.
    await expect(planSequence(outer, {}, context)).rejects.toThrow(
      /outer_run step 1 \(inner_run\): missing required argument "command"/,
    );
  });
});

describe('runSequence', () => {
  it('R6.1: steps run in order, each after the previous one ended, step_delay_ms apart', async () => {
    const result = await run(
      [1, 2, 3].map((n) => shellPlan(`s${String(n)}`, `sleep 0.1; echo ${String(n)}`)),
      { delayMs: 100 },
    );
    expect(result.status).toBe('completed');
    const steps = result.steps ?? [];
    expect(steps.map((step) => step.status)).toEqual(['completed', 'completed', 'completed']);
    for (let i = 1; i < steps.length; i++) {
      const gap =
        Date.parse(steps[i]?.startedAt ?? '') - Date.parse(steps[i - 1]?.finishedAt ?? '');
      expect(gap).toBeGreaterThanOrEqual(95);
    }
    expect(result.output).toMatch(/step 1\/3: s1 — completed, exit 0.*\n\$ bash -c .*\n1\n/);
  });

  it('R6.2: a refused step stops the sequence like a failed one, with the refusal in the transcript', async () => {
    const refused: StepPlan = {
      label: 'outside',
      prepare: () => Promise.reject(new AhmaError('PATH_OUTSIDE_SCOPE', 'x is outside the scope')),
    };
    const result = await run([shellPlan('ok', 'echo ok'), refused, shellPlan('after', 'echo no')]);
    expect(result.status).toBe('failed');
    expect(result.steps?.map((step) => step.status)).toEqual(['completed', 'refused', 'not_run']);
    expect(result.output).toContain('── step 2/3: outside — refused\nx is outside the scope\n');
  });

  it('R6.2: a step the executor refuses (a NUL byte) is recorded as refused; the transcript keeps the steps before it', async () => {
    const nul: StepPlan = {
      label: 'nul',
      prepare: () =>
        Promise.resolve({
          command: { kind: 'argv', argv: ['echo', 'a\0b'] },
          argv: ['echo', 'a\0b'],
          cwd: fixture.scope,
          timeoutMs: 10_000,
          cleanup: () => Promise.resolve(),
        }),
    };
    const result = await run([shellPlan('ok', 'echo ok'), nul, shellPlan('after', 'echo no')]);
    expect(result.steps?.map((step) => step.status)).toEqual(['completed', 'refused', 'not_run']);
    expect(result.output).toContain('ok\n');
    expect(result.output).toContain('NUL byte');
  });

  it('SPEC §3: the transcript is bounded like one output; the whole of it is in the log file', async () => {
    const chunk = (n: number) =>
      shellPlan(`big${String(n)}`, `head -c 20000 /dev/zero | tr '\\0' ${String(n)}`);
    const result = await run([chunk(1), chunk(2), chunk(3)]);
    expect(result.status).toBe('completed');
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(
      outputBudgetBytes(DEFAULT_MAX_OUTPUT_TOKENS),
    );
    expect(result.output).toContain('── step 1/3: big1');
    expect(result.output).toContain('── step 3/3: big3');
    const full = await readFile(result.fullOutputPath ?? '', 'utf8');
    for (const n of [1, 2, 3]) expect(full).toContain(`── step ${String(n)}/3: big${String(n)}`);
    expect(full.split('2').length - 1).toBeGreaterThanOrEqual(20000);
  });

  it('R15.2: max_output_tokens holds each step and the transcript; a cut step names its operation and step', async () => {
    const result = await run([shellPlan('small', 'echo small'), shellPlan('long', 'seq 1 20000')], {
      logName: 'op_seqtest_4',
      maxOutputTokens: 300,
    });
    expect(result.status).toBe('completed');
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(1200);
    const step = result.steps?.[1];
    expect(step?.truncated).toBe(true);
    expect(Buffer.byteLength(step?.output ?? '')).toBeLessThanOrEqual(1200);
    expect(step?.output).toContain(
      `full output: ${step?.fullOutputPath ?? ''}; read any part with the \`output\` tool: {"id": "op_seqtest_4", "step": 2} …]`,
    );
    expect(step?.output.endsWith('19999\n20000\n')).toBe(true);
  });

  it('R6.3: an abort before the first step runs nothing; a timeout during the delay stops it', async () => {
    const controller = new AbortController();
    controller.abort();
    const cancelled = await run([shellPlan('a', 'echo a')], { signal: controller.signal });
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.steps?.map((step) => step.status)).toEqual(['cancelled']);

    const timedOut = await run([shellPlan('a', 'echo a'), shellPlan('b', 'echo b')], {
      delayMs: 5_000,
      timeoutMs: 300,
    });
    expect(timedOut.status).toBe('timed_out');
    expect(timedOut.steps?.map((step) => step.status)).toEqual(['completed', 'timed_out']);
    expect(timedOut.durationMs).toBeLessThan(3_000);
  });
});
