// Sequences end to end over stdio (SPEC §9, R6.1–R6.3, R10.3–R10.5): steps strictly one after
// another and step_delay_ms apart, the first failure stops the rest, one operation (one id, one
// push), the caller's arguments and working directory in every step, cancel and timeouts.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  processesMatching,
  pushedId,
  readLog,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type Operations,
  type Scope,
  type StartedResult,
} from '../support/harness.js';

type StepSummary = NonNullable<CommandResult['steps']>[number];

const shellStep = (command: string) => ({ tool: 'sandboxed_shell', args: { command } });

/** A scope whose tools directory holds exactly these definitions. */
async function scopeWith(
  e2e: E2E,
  definitions: readonly Record<string, unknown>[],
): Promise<Scope> {
  const scope = await e2e.scope({ noTools: true });
  for (const definition of definitions) {
    await writeFile(
      join(scope.dir, '.ahma', 'tools', `${String(definition['name'])}.json`),
      JSON.stringify(definition),
    );
  }
  return scope;
}

/** A synchronous top-level sequence tool named `name` running `steps`. */
const sequenceTool = (name: string, steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name,
  description: `Sequence ${name}.`,
  command: 'sequence',
  synchronous: true,
  sequence: steps,
  ...extra,
});

/** A one-tool definition `name` (its "default" leaf carries the arguments). */
const leafTool = (name: string, command: string, leaf: Record<string, unknown>) => ({
  name,
  description: `The ${name} tool.`,
  command,
  subcommand: [{ name: 'default', description: `Runs ${command}.`, ...leaf }],
});

describe.concurrent('sequences', { timeout: 60_000 }, () => {
  it('R6.1: steps run strictly one after another, step_delay_ms apart (timestamps never overlap)', async ({
    e2e,
  }) => {
    // Each step records its start and end (ns) in a file of the scope.
    const step = (n: number) =>
      shellStep(
        `echo "${String(n)} start $(date +%s%N)" >> times; sleep 0.3; echo "${String(n)} end $(date +%s%N)" >> times; echo step${String(n)}`,
      );
    const scope = await scopeWith(e2e, [
      sequenceTool('ordered', [step(1), step(2), step(3)], { step_delay_ms: 150 }),
    ]);
    const server = await e2e.inProcess(scope);
    const result = await server.call('ordered');
    expect(result.isError).toBe(false);
    const content = structured<CommandResult>(result);
    expect(content.status).toBe('completed');
    expect(content.steps?.map((s: StepSummary) => s.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);

    const times = (await readFile(join(scope.dir, 'times'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => line.split(' '));
    expect(times.map(([n, what]) => `${String(n)} ${String(what)}`)).toEqual([
      '1 start',
      '1 end',
      '2 start',
      '2 end',
      '3 start',
      '3 end',
    ]);
    const ms = times.map(([, , at]) => Number(BigInt(at ?? '0') / 1000n) / 1000);
    // Never overlapping: every timestamp at or after the one before it.
    expect(ms).toEqual([...ms].sort((a, b) => a - b));
    // The gap between one step's end and the next one's start is at least the delay.
    const gaps = [1, 3].map((end) => (ms[end + 1] ?? 0) - (ms[end] ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(140);
    // The structured steps say the same.
    const [first, second] = content.steps ?? [];
    expect(Date.parse(second?.started_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(first?.finished_at ?? ''),
    );
    // The transcript shows every step with its outcome and output.
    const text = textOf(result);
    for (const n of [1, 2, 3]) {
      expect(text).toContain(`── step ${String(n)}/3: sandboxed_shell — completed, exit 0`);
      expect(text).toContain(`step${String(n)}\n`);
    }
  });

  it("SPEC §12: a sequence kept open sends heartbeats with the running step's last output line", async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      sequenceTool('building', [shellStep('echo fetched'), shellStep('echo compiling; sleep 1.5')]),
    ]);
    const server = await e2e.inProcess({
      ...scope,
      env: { ...scope.env, AHMA_TEST_HEARTBEAT_MS: '100' },
    });
    const result = await server.call('building', {}, { progress: true });
    expect(result.isError).toBe(false);
    expect(server.progress.map((p) => p.message)).toContainEqual(
      expect.stringMatching(/running for \d+ s; last output: compiling$/),
    );
  });

  it('R6.2: the first failing step stops the sequence; the result is isError with every step', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      sequenceTool('stops', [
        shellStep('echo one'),
        shellStep('echo two; exit 3'),
        shellStep('touch three; echo three'),
      ]),
    ]);
    const server = await e2e.inProcess(scope);
    const result = await server.call('stops');
    expect(result.isError).toBe(true);
    const content = structured<CommandResult>(result);
    expect(content).toMatchObject({ status: 'failed', exit_code: 3 });
    expect(content.steps?.map((s: StepSummary) => [s.status, s.exit_code])).toEqual([
      ['completed', 0],
      ['failed', 3],
      ['not_run', null],
    ]);
    expect(textOf(result)).toContain('── step 3/3: sandboxed_shell — not run');
    await expect(readFile(join(scope.dir, 'three'))).rejects.toThrow();
  });

  it('R6.3/R2.2: an asynchronous sequence is one operation: one id, one completion push', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      {
        ...sequenceTool('background', [shellStep('sleep 0.2; echo a'), shellStep('echo b')]),
        synchronous: false,
      },
    ]);
    const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
    const started = structured<StartedResult>(await server.call('background', {}));
    expect(started).toEqual({
      operation_id: expect.stringMatching(/^op_/),
      status: 'started',
      tool: 'background',
    });
    const push = await waitFor(
      () => server.messages.find((m) => pushedId(m) === started.operation_id),
      'the completion push',
    );
    expect(push.data).toMatchObject({ status: 'completed', exit_code: 0 });
    expect((push.data as CommandResult).output).toContain('── step 2/2');
    expect((push.data as CommandResult).steps).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.messages.filter((m) => pushedId(m) === started.operation_id)).toHaveLength(1);
    const status = structured<Operations>(await server.call('status'));
    expect(status.operations.map((o) => o.operation_id)).toEqual([started.operation_id]);
  });

  it("R10.3: every step gets the caller's non-meta arguments it takes, its own args override them, and the caller's working_directory", async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      leafTool('say', 'echo', {
        synchronous: true,
        options: [{ name: 'word', type: 'string' }],
        positional_args: [{ name: 'tag', type: 'string' }],
      }),
      {
        name: 'greet',
        description: 'Say twice, then where.',
        command: 'sequence',
        synchronous: true,
        subcommand: [
          {
            name: 'run',
            description: 'Run the greeting.',
            options: [{ name: 'word', type: 'string' }],
          },
        ],
        sequence: [
          { tool: 'say', args: { tag: 'first' } },
          { tool: 'say', args: { tag: 'second', word: 'override' } },
          shellStep('pwd'),
        ],
      },
    ]);
    await mkdir(join(scope.dir, 'sub'));
    const server = await e2e.inProcess(scope);
    const result = await server.call('greet_run', { word: 'hello', working_directory: 'sub' });
    expect(result.isError).toBe(false);
    const content = structured<CommandResult>(result);
    expect(content.steps?.map((s: StepSummary) => s.argv)).toEqual([
      ['echo', '--word', 'hello', 'first'],
      ['echo', '--word', 'override', 'second'],
      ['bash', '-c', 'pwd'],
    ]);
    expect(content.output).toContain(`--word hello first\n`);
    expect(content.output).toContain(`--word override second\n`);
    expect(content.output).toContain(`${join(scope.dir, 'sub')}\n`);
    // The working directory is never an argument of the command.
    expect(content.output).not.toContain('working_directory');
  });

  it('NFR4.3: a script step is audited with the argv that ran, while its transcript shows bash -c', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [sequenceTool('where', [shellStep('pwd')])]);
    const server = await e2e.inProcess(scope);
    const content = structured<CommandResult>(await server.call('where', {}));
    expect(content.steps?.map((s: StepSummary) => s.argv)).toEqual([['bash', '-c', 'pwd']]);
    await server.close();
    const audits = (await readLog(scope)).lines.flatMap((line) =>
      line['msg'] === 'execution' ? [line['audit'] as { operation: string; argv: string[] }] : [],
    );
    expect(audits.filter((a) => a.operation === content.operation_id).map((a) => a.argv)).toEqual([
      ['bash', '--noprofile', '--norc', '-c', 'pwd'],
    ]);
  });

  it('R6.2: a step whose arguments are invalid refuses the whole call before any step runs', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      leafTool('count', 'echo', { options: [{ name: 'n', type: 'integer', required: true }] }),
      sequenceTool('broken', [shellStep('touch ran'), { tool: 'count' }]),
    ]);
    const server = await e2e.inProcess(scope);
    const result = await server.call('broken');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('broken step 2 (count)');
    await expect(readFile(join(scope.dir, 'ran'))).rejects.toThrow();
  });

  it('R7.1: a path outside the scope in a later step, or a bad working_directory, refuses the call before any step runs', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      leafTool('show', 'cat', {
        positional_args: [{ name: 'file', type: 'string', format: 'path', required: true }],
      }),
      sequenceTool('reads', [
        shellStep('touch ran'),
        { tool: 'show', args: { file: '/etc/passwd' } },
      ]),
    ]);
    const server = await e2e.inProcess(scope);
    const outside = await server.call('reads');
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/reads step 2 \(show\): .*outside the sandbox scope/);
    const nowhere = await server.call('reads', { working_directory: 'no-such-dir' });
    expect(nowhere.isError).toBe(true);
    expect(textOf(nowhere)).toContain('does not exist');
    await expect(readFile(join(scope.dir, 'ran'))).rejects.toThrow();
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('SPEC §2 argv: a positional starting with "-" in a later step refuses the call before any step runs', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      leafTool('show', 'cat', { positional_args: [{ name: 'file', type: 'string' }] }),
      sequenceTool('reads', [shellStep('touch ran'), { tool: 'show', args: { file: '-n' } }]),
    ]);
    const server = await e2e.inProcess(scope);
    const result = await server.call('reads');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('reads step 2 (show): argument "file": "-n" starts with "-"');
    await expect(readFile(join(scope.dir, 'ran'))).rejects.toThrow();
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R6.3: cancel kills the running step and runs no further step', async ({ e2e }) => {
    const marker = uniqueMarker();
    const scope = await scopeWith(e2e, [
      {
        ...sequenceTool('long', [
          shellStep(`exec -a ${marker} sleep 30`),
          shellStep('touch after'),
        ]),
        synchronous: false,
      },
    ]);
    const server = await e2e.inProcess(scope);
    const started = structured<StartedResult>(await server.call('long'));
    await waitFor(async () => (await processesMatching(marker)).length === 1, 'the first step');
    const cancelled = await server.call('cancel', { id: started.operation_id });
    const content = structured<CommandResult>(cancelled);
    expect(content.status).toBe('cancelled');
    expect(content.steps?.map((s: StepSummary) => s.status)).toEqual(['cancelled', 'not_run']);
    await waitFor(async () => (await processesMatching(marker)).length === 0, 'the step killed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(readFile(join(scope.dir, 'after'))).rejects.toThrow();
  });

  it("R6.3: each step keeps its own timeout, and the sequence's timeout_seconds bounds the whole", async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, [
      leafTool('nap', 'sleep', {
        timeout_seconds: 1,
        positional_args: [{ name: 'seconds', type: 'string', required: true }],
      }),
      sequenceTool('slow-step', [{ tool: 'nap', args: { seconds: '10' } }, shellStep('echo no')]),
      sequenceTool('slow-total', [
        shellStep('sleep 0.8'),
        shellStep('sleep 0.8'),
        shellStep('echo no'),
      ]),
    ]);
    const server = await e2e.inProcess(scope);

    const step = structured<CommandResult>(await server.call('slow-step'));
    expect(step.status).toBe('timed_out');
    expect(step.steps?.map((s: StepSummary) => s.status)).toEqual(['timed_out', 'not_run']);
    expect(step.duration_ms).toBeLessThan(5_000);

    const total = structured<CommandResult>(
      await server.call('slow-total', { timeout_seconds: 1 }),
    );
    expect(total.status).toBe('timed_out');
    expect(total.steps?.map((s: StepSummary) => s.status)).toEqual([
      'completed',
      'timed_out',
      'not_run',
    ]);
    expect(total.duration_ms).toBeLessThan(4_000);
  });
});

describe.concurrent(
  'SPEC §2 compat: sequence steps and "default" in subcommand names',
  { timeout: 60_000 },
  () => {
    it('SPEC §2 compat: a step naming "set_default" runs that subcommand, not its sibling "set" (one-shot CLI)', async ({
      e2e,
    }) => {
      const scope = await scopeWith(e2e, [
        {
          name: 'cfg',
          description: 'x',
          command: 'echo',
          subcommand: [
            { name: 'set', description: 's' },
            { name: 'set_default', description: 'd' },
          ],
        },
        sequenceTool('seq', [{ tool: 'cfg', subcommand: 'set_default' }]),
      ]);
      const result = await e2e.run(
        ['--sandbox-scope', scope.dir, '--tool_name', 'seq', '--tool_args', '{}'],
        { cwd: scope.dir, env: scope.env },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('set_default\n');
      expect(result.stdout).not.toMatch(/^set$/m);
    });
  },
);
