// R15.3: the `output` tool end to end, through a server made from its command line in this process
// and the SDK client: any window of a 60 MB output (its end by a negative offset, its last lines, a
// line found by a pattern), a command followed while it runs, a sequence's running step and
// finished steps, and the refusals (an unknown id, a pattern that backtracks catastrophically or
// does not parse, a log that is gone, arguments that do not go together).
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  pushedId,
  sleep,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type Operations,
  type RunningServer,
  type StartedResult,
} from '../support/harness.js';
import { modernStdioClient } from '../support/modern-client.js';

/** The structured result of `output`. */
interface OutputWindow {
  readonly id: string;
  readonly tool: string;
  readonly step?: number;
  readonly status: string;
  readonly running: boolean;
  readonly source: 'log' | 'result' | 'memory';
  readonly complete: boolean;
  readonly total_bytes: number;
  readonly mode: 'bytes' | 'tail' | 'grep';
  readonly start?: number;
  readonly end?: number;
  readonly lines?: number;
  readonly matches?: number;
  readonly shown?: number;
  readonly lines_searched?: number;
  readonly searched_all?: boolean;
  readonly text: string;
}

/** Bytes of `seq 1 8000000`. */
const SEQ_BYTES = 62_888_896;

/** Runs `command` in the background and waits for its result. */
async function finished(server: RunningServer, command: string): Promise<CommandResult> {
  const started = structured<StartedResult | CommandResult>(
    await server.call('sandboxed_shell', { command }),
  );
  const [done] = structured<Operations>(
    await server.call('await', { ids: [started.operation_id], timeout_seconds: 120 }),
  ).operations;
  expect(done?.status).toBe('completed');
  return done as CommandResult;
}

async function output(server: RunningServer, args: Record<string, unknown>) {
  const result = await server.call('output', args);
  expect(result.isError, textOf(result)).toBe(false);
  return { text: textOf(result), window: structured<OutputWindow>(result) };
}

async function refusal(server: RunningServer, args: Record<string, unknown>) {
  const result = await server.call('output', args);
  expect(result.isError).toBe(true);
  return {
    text: textOf(result),
    code: structured<{ error: { code: string } }>(result).error.code,
  };
}

describe.concurrent('output', { timeout: 60_000 }, () => {
  it('R15.3: any part of a 60 MB output: its end by a negative offset, its last lines, a line found by grep', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const done = await finished(server, 'seq 1 8000000');
    expect(done.truncated).toBe(true);
    expect(done.full_output_path).toBeDefined();
    const id = done.operation_id;

    const end = await output(server, { id, offset: -100 });
    expect(end.window).toMatchObject({
      id,
      tool: 'sandboxed_shell',
      status: 'completed',
      running: false,
      source: 'log',
      mode: 'bytes',
      start: SEQ_BYTES - 100,
      end: SEQ_BYTES,
      total_bytes: SEQ_BYTES,
    });
    expect(end.window.text.endsWith('7999998\n7999999\n8000000\n')).toBe(true);
    expect(end.text).toContain(
      `bytes ${String(SEQ_BYTES - 100)}..${String(SEQ_BYTES)} of ${String(SEQ_BYTES)}`,
    );
    expect(end.text).toContain('from its full output log');

    const middle = await output(server, { id, offset: 1000, length: 20 });
    const start = Array.from({ length: 1000 }, (_, i) => `${String(i + 1)}\n`).join('');
    expect(middle.window.text).toBe(start.slice(1000, 1020));
    expect(middle.text).toContain('(next: offset 1020)');

    const tail = await output(server, { id, tail: 3 });
    expect(tail.window).toMatchObject({
      mode: 'tail',
      lines: 3,
      text: '7999998\n7999999\n8000000\n',
    });
    expect(tail.text).toContain('the last 3 lines');

    const started = performance.now();
    const grep = await output(server, { id, grep: '^7777777$', context: 1 });
    const grepMs = performance.now() - started;
    expect(grep.window).toMatchObject({
      mode: 'grep',
      matches: 1,
      shown: 1,
      lines_searched: 8_000_000,
      searched_all: true,
      text: '7777776-7777776\n7777777:7777777\n7777778-7777778',
    });
    expect(grep.text).toContain('1 matching line for /^7777777$/, 8000000 lines searched');
    expect(grepMs).toBeLessThan(15_000);
  }, 120_000);

  it('R15.3: a running command is followed while it runs: the ticks so far, and that it is still running', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '0']);
    const started = structured<StartedResult>(
      await server.call('sandboxed_shell', {
        command: 'for i in $(seq 1 50); do echo tick-$i; sleep 0.1; done',
      }),
    );
    expect(started.status).toBe('started');
    const id = started.operation_id;

    const early = await waitFor(async () => {
      const read = await output(server, { id });
      return read.window.text.includes('tick-3\n') ? read : undefined;
    }, 'three ticks');
    expect(early.window).toMatchObject({
      id,
      status: 'running',
      running: true,
      source: 'memory',
      complete: true,
    });
    expect(early.window.text).toMatch(/^tick-1\ntick-2\ntick-3\n/);
    expect(early.window.text).not.toContain('tick-50');
    expect(early.text).toContain(`${id} (sandboxed_shell, still running)`);

    // Following it: later reads see more.
    await sleep(500);
    const later = await output(server, { id, tail: 1 });
    expect(later.window.running).toBe(true);
    const last = Number(/tick-(\d+)/.exec(later.window.text)?.[1]);
    expect(last).toBeGreaterThan(3);
    expect(last).toBeLessThan(50);
    const found = await output(server, { id, grep: '^tick-2$' });
    expect(found.window).toMatchObject({ running: true, matches: 1, text: '2:tick-2' });

    await server.call('await', { ids: [id], timeout_seconds: 30 });
    const after = await output(server, { id, tail: 2 });
    expect(after.window).toMatchObject({
      running: false,
      status: 'completed',
      source: 'result',
      text: 'tick-49\ntick-50\n',
    });
  }, 60_000);

  it('R15.3/R2.7: reading a window of a finished operation does not count as handing its result over', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '0']);
    const { operation_id: id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 0.3; echo done' }),
    );
    await waitFor(
      () => server.messages.some((message) => pushedId(message) === id),
      'the push of the finished command',
    );
    const first = await output(server, { id });
    expect(first.text).toContain('[ahma] Finished since your last call');
    expect(first.text).toContain(`${id} (sandboxed_shell, completed): bytes 0..5 of 5`);
    expect(first.window).toMatchObject({ status: 'completed', text: 'done\n' });
    const second = await output(server, { id });
    expect(second.text).not.toContain('Finished since your last call');
  }, 30_000);

  it("R15.3: a sequence's running step is read while it runs, each step's whole output after", async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true });
    await writeFile(
      join(scope.dir, '.ahma', 'tools', 'build.json'),
      JSON.stringify({
        name: 'build',
        description: 'Sequence build.',
        command: 'sequence',
        sequence: [
          { tool: 'sandboxed_shell', args: { command: 'seq 1 100000' } },
          { tool: 'sandboxed_shell', args: { command: 'echo compiling; sleep 1.5; echo linked' } },
        ],
      }),
    );
    const server = await e2e.inProcess(scope, ['--inline-wait', '0']);
    const { operation_id: id } = structured<StartedResult>(await server.call('build', {}));
    const running = await waitFor(async () => {
      const read = await output(server, { id });
      return read.window.step === 2 && read.window.text.includes('compiling') ? read : undefined;
    }, 'the second step');
    expect(running.window).toMatchObject({ running: true, text: 'compiling\n' });
    expect(running.text).toContain(`step 2 of ${id} (build, still running)`);

    await server.call('await', { ids: [id], timeout_seconds: 30 });
    const first = await output(server, { id, step: 1, tail: 1 });
    expect(first.window).toMatchObject({ step: 1, source: 'log', text: '100000\n' });
    const transcript = await output(server, { id, grep: '^── step' });
    expect(transcript.window.matches).toBe(2);
    expect((await refusal(server, { id, step: 3 })).text).toContain(`${id} has 2 steps`);
  }, 60_000);

  it('R15.3: refused: an unknown id, a pattern too slow or invalid, a log that is gone, arguments that do not go together', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const unknown = await refusal(server, { id: 'op_none_1', tail: 3 });
    expect(unknown.code).toBe('OPERATION_UNKNOWN');
    expect(unknown.text).toContain('op_none_1');

    const small = await finished(server, `printf '${'a'.repeat(40)}b\\n'`);
    const slow = await refusal(server, { id: small.operation_id, grep: '(a+)+$' });
    expect(slow.code).toBe('PATTERN_REFUSED');
    expect(slow.text).toContain('the pattern took too long on line 1');
    // The server answers at once again.
    expect((await output(server, { id: small.operation_id, grep: 'b$' })).window.matches).toBe(1);

    const invalid = await refusal(server, { id: small.operation_id, grep: '[' });
    expect(invalid.code).toBe('PATTERN_REFUSED');
    expect(invalid.text).toContain('not a valid JavaScript regular expression');

    const both = await refusal(server, { id: small.operation_id, tail: 1, offset: 0 });
    expect(both.code).toBe('ARGUMENTS_INVALID');
    const stray = await refusal(server, { id: small.operation_id, context: 2 });
    expect(stray.text).toContain('context goes only with grep');
    const notSequence = await refusal(server, { id: small.operation_id, step: 1 });
    expect(notSequence.text).toContain('is not a sequence');

    const big = await finished(server, 'seq 1 100000');
    await rm(big.full_output_path ?? '');
    const goneLog = await refusal(server, { id: big.operation_id, tail: 1 });
    expect(goneLog.code).toBe('OUTPUT_UNAVAILABLE');
    expect(goneLog.text).toContain('is no longer available');
  }, 60_000);

  it('R15.3: a 2026-07-28 client lists `output` and reads a window with it', async ({ e2e }) => {
    const scope = await e2e.scope();
    const client = await modernStdioClient(e2e, scope);
    expect(client.getProtocolEra()).toBe('modern');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('output');
    const done = await client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: 'seq 1 100000' },
    });
    const id = (done.structuredContent as { operation_id: string }).operation_id;
    // The SDK client checks structuredContent against the declared outputSchema.
    const read = await client.callTool({ name: 'output', arguments: { id, tail: 2 } });
    expect(read.isError).toBe(false);
    expect(read.structuredContent).toMatchObject({ source: 'log', text: '99999\n100000\n' });
  }, 60_000);
});
