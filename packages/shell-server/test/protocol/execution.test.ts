// tools/call end to end: synchronous and asynchronous tools, await and status, timeouts, failures,
// argument validation, argv fidelity and merged output (SPEC §3). How results are delivered
// (inline wait, completion pushes, progress) is delivery.test.ts. Each test has its own server;
// they run at once.
import { describe, expect } from 'vitest';
import {
  it,
  sleep,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type Operations,
  type StartedResult,
} from '../support/harness.js';

/** Async calls answer `started` at once, whatever their command's speed (SPEC §3 inline wait). */
const AT_ONCE = ['--inline-wait', '0'];

/** A value no shell may interpret: every metacharacter, quotes, a newline and a glob. */
const METACHARACTERS =
  '; rm -rf ~ $(id) `id` \'q\' "q" \n * && | > /tmp/x < /etc/passwd $HOME \\ ! #';

describe.concurrent('synchronous calls', { timeout: 60_000 }, () => {
  it('R3.1: a synchronous tool blocks and returns its output as text and as the finished structuredContent', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('e2e_sync', { value: 'hello' });
    expect(result.isError).toBe(false);
    const content = structured<CommandResult>(result);
    expect(content).toEqual({
      operation_id: expect.stringMatching(/^op_/),
      tool: 'e2e_sync',
      status: 'completed',
      exit_code: 0,
      output: 'sync\n--value\nhello\n',
      truncated: false,
      duration_ms: expect.any(Number),
    });
    expect(content.duration_ms).toBeGreaterThanOrEqual(0);
    // The text for the model names the operation, how it ended, then the output verbatim.
    expect(textOf(result)).toMatch(
      new RegExp(
        `^${content.operation_id} completed \\(exit code 0, \\d+ ms\\)\\nsync\\n--value\\nhello\\n$`,
      ),
    );
  });

  it('SPEC §3: operation ids are unique across calls', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++)
      ids.add(structured<CommandResult>(await server.call('e2e_sync')).operation_id);
    expect(ids.size).toBe(5);
  });

  it('SPEC §3: a non-zero exit is a tool result with isError, exit_code and output, never a JSON-RPC error', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('fails');
    expect(result.isError).toBe(true);
    expect(structured<CommandResult>(result)).toMatchObject({
      tool: 'fails',
      status: 'failed',
      exit_code: 4,
      output: 'boom\nbang\nbye\n',
    });
    expect(textOf(result)).toMatch(/ failed \(exit code 4, \d+ ms\)\nboom\nbang\nbye\n$/);
  });

  it('SPEC §3: a subcommand-level timeout_seconds of 1 kills the command: status timed_out and isError', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const started = Date.now();
    const result = await server.call('slow');
    const elapsed = Date.now() - started;
    expect(result.isError).toBe(true);
    const content = structured<CommandResult>(result);
    expect(content).toMatchObject({ tool: 'slow', status: 'timed_out' });
    expect(textOf(result)).toContain('timed out; its processes were killed');
    // Killed after about a second, not after the 30 s sleep (SIGTERM ends sleep at once).
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(6000);
    expect(content.duration_ms).toBeGreaterThanOrEqual(900);
  });

  it('R10.1: the per-call timeout_seconds meta-parameter overrides the subcommand timeout', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const started = Date.now();
    // Longer than the subcommand's 1 s: the command must survive past the second.
    const result = await server.call('slow', { timeout_seconds: 2.5 });
    expect(structured<CommandResult>(result).status).toBe('timed_out');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
    expect(structured<CommandResult>(result).duration_ms).toBeGreaterThanOrEqual(2400);
  });

  it('SPEC §3: bad arguments get an isError result naming the field, and nothing runs', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const wrongType = await server.call('e2e_sync', { value: 42 });
    expect(wrongType.isError).toBe(true);
    expect(wrongType.structuredContent).toEqual({
      error: { code: 'ARGUMENTS_INVALID', message: expect.stringContaining('"value"') as unknown },
    });
    expect(textOf(wrongType)).toMatch(/Invalid arguments for e2e_sync:[\s\S]*"value"/);

    const unknown = await server.call('e2e_sync', { valeu: 'typo' });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('valeu');

    const missing = await server.call('files_show', {});
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('path');

    const noCommand = await server.call('sandboxed_shell', {});
    expect(noCommand.isError).toBe(true);
    expect(textOf(noCommand)).toContain('command');

    const badTimeout = await server.call('sandboxed_shell', {
      command: 'true',
      timeout_seconds: -1,
    });
    expect(badTimeout.isError).toBe(true);
    expect(textOf(badTimeout)).toContain('timeout_seconds');

    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('SPEC §3: an unknown tool name is refused', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    await expect(server.call('no_such_tool')).rejects.toThrow(/no_such_tool/);
  });
});

describe.concurrent('argv fidelity', { timeout: 60_000 }, () => {
  it('R10.1: an option value full of shell metacharacters arrives as one byte-identical argv element', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('argv', { text: METACHARACTERS });
    expect(result.isError).toBe(false);
    expect(JSON.parse(structured<CommandResult>(result).output)).toEqual([
      '--text',
      METACHARACTERS,
    ]);

    const words = ['a b', '$HOME', '*', 'x -rf', '', '; id', METACHARACTERS];
    const positional = await server.call('argv', { words });
    expect(JSON.parse(structured<CommandResult>(positional).output)).toEqual(words);
  });

  it('SPEC §2 argv: a positional word starting with "-" is a tool error naming the field, and nothing runs', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const refused = await server.call('argv', { words: ['ok', '-rf'] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('argument "words": "-rf" starts with "-"');
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R10.1: an option value echoed through printf comes back unchanged', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('e2e_sync', { value: METACHARACTERS });
    expect(structured<CommandResult>(result).output).toBe(`sync\n--value\n${METACHARACTERS}\n`);
  });

  it('R10.1: meta-parameters (working_directory, timeout_seconds, execution_mode) are never passed to the command', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const setup = await server.call('sandboxed_shell', { command: 'mkdir -p sub' });
    await server.call('await', { ids: [structured<StartedResult>(setup).operation_id] });
    const result = await server.call('argv', {
      text: 'x',
      working_directory: 'sub',
      timeout_seconds: 30,
      execution_mode: 'Synchronous',
    });
    expect(JSON.parse(structured<CommandResult>(result).output)).toEqual(['--text', 'x']);
    // working_directory was honoured, though: a relative path resolves inside it.
    const path = await server.call('files_show', { path: 'f.txt', working_directory: 'sub' });
    expect(structured<CommandResult>(path).output).toBe(`show\n${scope.dir}/sub/f.txt\n`);
  });
});

describe.concurrent('asynchronous calls', { timeout: 60_000 }, () => {
  it('R2.1: an async tool returns at once with {operation_id, status: started, tool} while the command runs', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const started = Date.now();
    // Far longer than the answer may take on a busy machine; cancelled at the end.
    const result = await server.call('sandboxed_shell', { command: 'sleep 30; echo late' });
    expect(Date.now() - started).toBeLessThan(3000);
    const content = structured<StartedResult>(result);
    expect(content).toEqual({
      operation_id: expect.stringMatching(/^op_/),
      status: 'started',
      tool: 'sandboxed_shell',
    });
    expect(result.isError).toBeFalsy();
    // The text names the id and says how the result will arrive, and how to wait for it.
    expect(textOf(result)).toContain(content.operation_id);
    expect(textOf(result)).toMatch(/its result is put before the result of your next tool call/);
    expect(textOf(result)).toContain(`\`await\` with ids ["${content.operation_id}"]`);
    const status = structured<Operations>(
      await server.call('status', { ids: [content.operation_id] }),
    );
    expect(status.operations[0]?.status).toBe('running');
    await server.call('cancel', { id: content.operation_id });
  });

  it('R2.2: a result is never lost: status returns it after completion', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const { operation_id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'echo kept' }),
    );
    const finished = await waitFor(async () => {
      const entry = structured<Operations>(await server.call('status', { ids: [operation_id] }))
        .operations[0];
      return entry?.status === 'running' ? undefined : entry;
    }, 'the operation to finish');
    expect(finished).toMatchObject({
      operation_id,
      status: 'completed',
      exit_code: 0,
      output: 'kept\n',
      truncated: false,
    });
  });

  it('R2.3: await blocks until the named operation finishes and returns its result', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const { operation_id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 0.6; echo awaited; exit 3' }),
    );
    const started = Date.now();
    const result = await server.call('await', { ids: [operation_id] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(result.isError).toBe(true);
    expect(structured<Operations>(result).operations).toEqual([
      {
        operation_id,
        tool: 'sandboxed_shell',
        status: 'failed',
        exit_code: 3,
        output: 'awaited\n',
        truncated: false,
        duration_ms: expect.any(Number),
      },
    ]);
    expect(textOf(result)).toContain(`${operation_id} failed (exit code 3`);
  });

  it('R2.3: await without ids waits for every running operation', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const first = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 0.8; echo one' }),
    );
    const second = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: 'sleep 1; echo two' }),
    );
    const started = Date.now();
    const result = await server.call('await', {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(result.isError).toBe(false);
    const operations = structured<Operations>(result).operations;
    expect(operations.map((o) => o.operation_id).sort()).toEqual(
      [first.operation_id, second.operation_id].sort(),
    );
    expect(operations.map((o) => (o.status === 'running' ? '' : o.output)).sort()).toEqual([
      'one\n',
      'two\n',
    ]);
  });

  it('R2.3: await gives up after its timeout_seconds and reports the operation still running', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const { operation_id } = structured<StartedResult>(
      // Beside the writers that follow (SPEC §14 lanes): e2e_sync must not wait for it.
      await server.call('sandboxed_shell', { command: 'sleep 30', concurrency: 'service' }),
    );
    const started = Date.now();
    const result = await server.call('await', { ids: [operation_id], timeout_seconds: 0.5 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(structured<Operations>(result).operations).toEqual([
      { operation_id, tool: 'sandboxed_shell', status: 'running' },
    ]);
    await server.call('cancel', { id: operation_id });
  });

  it('SPEC §3: status is a non-blocking snapshot of running and finished operations', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), AT_ONCE);
    const running = structured<StartedResult>(
      // Beside the writers that follow (SPEC §14 lanes): e2e_sync must not wait for it.
      await server.call('sandboxed_shell', { command: 'sleep 30', concurrency: 'service' }),
    );
    const done = structured<CommandResult>(await server.call('e2e_sync', { value: 'v' }));
    const started = Date.now();
    const result = await server.call('status', {});
    expect(Date.now() - started).toBeLessThan(2000);
    const operations = structured<Operations>(result).operations;
    expect(operations).toContainEqual({
      operation_id: running.operation_id,
      tool: 'sandboxed_shell',
      status: 'running',
    });
    expect(operations).toContainEqual(done);
    expect(textOf(result)).toContain(`${running.operation_id} running (sandboxed_shell)`);
    const unknown = await server.call('status', { ids: ['op_nope_1'] });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('op_nope_1');
    await server.call('cancel', { id: running.operation_id });
  });

  it('SPEC §3: status with no ids is not an error because a past operation failed; named, it is', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const failed = structured<CommandResult>(await server.call('fails'));
    expect(failed.status).toBe('failed');
    const all = await server.call('status', {});
    expect(structured<Operations>(all).operations).toContainEqual(failed);
    expect(all.isError).toBe(false);
    const named = await server.call('status', { ids: [failed.operation_id] });
    expect(named.isError).toBe(true);
  });

  it('R15.1: stderr is merged into stdout as one chronological stream', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const script = 'for i in $(seq 1 25); do echo out$i; echo err$i >&2; done; printf tail >&2';
    const { operation_id } = structured<StartedResult>(
      await server.call('sandboxed_shell', { command: script }),
    );
    const [finished] = structured<Operations>(
      await server.call('await', { ids: [operation_id] }),
    ).operations;
    const expected =
      Array.from({ length: 25 }, (_, i) => `out${String(i + 1)}\nerr${String(i + 1)}\n`).join('') +
      'tail';
    expect(finished).toMatchObject({ status: 'completed', output: expected });
  });

  it('R15.1: the stderr of a definition tool is merged too, in order', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    // fails: console.log('boom'); console.error('bang'); console.log('bye')
    expect(structured<CommandResult>(await server.call('fails')).output).toBe('boom\nbang\nbye\n');
  });
});

describe.concurrent('--sync', { timeout: 60_000 }, () => {
  it('R3.4: --sync makes an async tool return its final result in the response', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--sync', ...AT_ONCE]);
    const result = await server.call('e2e_async', { value: 'forced' }, { progress: true });
    expect(result.isError).toBe(false);
    expect(structured<CommandResult>(result)).toMatchObject({
      tool: 'e2e_async',
      status: 'completed',
      exit_code: 0,
      output: 'async\n--value\nforced\n',
    });
    const shell = await server.call('sandboxed_shell', { command: 'echo now; exit 5' });
    expect(shell.isError).toBe(true);
    expect(structured<CommandResult>(shell)).toMatchObject({
      status: 'failed',
      exit_code: 5,
      output: 'now\n',
    });
    // --sync wins over a per-call execution_mode too (R10.1).
    const forced = await server.call('sandboxed_shell', {
      command: 'sleep 0.3; echo still blocking',
      execution_mode: 'AsyncResultPush',
    });
    expect(structured<CommandResult>(forced)).toMatchObject({
      status: 'completed',
      output: 'still blocking\n',
    });
    // The results came in the responses; no completion push follows.
    await sleep(300);
    expect(server.messages).toEqual([]);
  });
});

describe.concurrent('the output budget (R15.2)', { timeout: 60_000 }, () => {
  /** The bytes of the output the model is shown, and its elision marker. */
  const cut = (content: CommandResult) => ({
    bytes: Buffer.byteLength(content.output),
    marker:
      /\n\[… (\d+) bytes \((\d+) lines\) left out \(of (\d+)\); full output: ([^;]+); read any part with the `output` tool: (\{[^}]*\}) …\]\n/.exec(
        content.output,
      ),
  });

  it('R15.2: a call with max_output_tokens 500 gets at most 2,000 bytes through the built server, with a marker saying what was left out and how to read it', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('sandboxed_shell', {
      command: 'seq 1 100000',
      max_output_tokens: 500,
      execution_mode: 'Synchronous',
    });
    const content = structured<CommandResult>(result);
    expect(content).toMatchObject({ status: 'completed', truncated: true });
    const { bytes, marker } = cut(content);
    expect(bytes).toBeLessThanOrEqual(2000);
    expect(marker).not.toBeNull();
    const [, left, lines, total, path, ref] = marker ?? [];
    expect(Number(total)).toBe(588_895);
    expect(Number(left)).toBeGreaterThan(580_000);
    expect(Number(lines)).toBeGreaterThan(99_000);
    expect(path).toBe(content.full_output_path);
    expect(JSON.parse(ref ?? '')).toEqual({ id: content.operation_id });
    expect(content.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(content.output.endsWith('99999\n100000\n')).toBe(true);
    // A meta-parameter: never passed to the command, and checked like the others.
    const refused = await server.call('sandboxed_shell', {
      command: 'echo x',
      max_output_tokens: 50,
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/max_output_tokens/);
  });

  it("R15.2: without max_output_tokens the server's --max-output-tokens applies; a call's own wins", async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--max-output-tokens', '300']);
    const run = async (extra: Record<string, unknown> = {}) =>
      structured<CommandResult>(
        await server.call('sandboxed_shell', {
          command: 'seq 1 100000',
          execution_mode: 'Synchronous',
          ...extra,
        }),
      );
    const serverDefault = cut(await run());
    expect(serverDefault.bytes).toBeLessThanOrEqual(1200);
    expect(serverDefault.marker).not.toBeNull();
    const own = cut(await run({ max_output_tokens: 2000 }));
    expect(own.bytes).toBeGreaterThan(4000);
    expect(own.bytes).toBeLessThanOrEqual(8000);
    // Small outputs are untouched, but for progress bars and repeated lines.
    const small = await run({ command: 'printf "a\\rb\\n"; yes same line | head -50; echo end' });
    expect(small).toMatchObject({
      truncated: false,
      output: 'b\nsame line\n[… repeated 49 more times]\nend\n',
    });
  });

  it('R15.2: the default budget is 10,000 tokens (40,000 bytes)', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const content = structured<CommandResult>(
      await server.call('sandboxed_shell', {
        command: 'seq 1 100000',
        execution_mode: 'Synchronous',
      }),
    );
    const { bytes, marker } = cut(content);
    expect(content.truncated).toBe(true);
    expect(marker).not.toBeNull();
    expect(bytes).toBeLessThanOrEqual(40_000);
    expect(bytes).toBeGreaterThan(39_000);
  });
});
