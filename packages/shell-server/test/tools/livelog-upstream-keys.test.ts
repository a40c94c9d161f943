// Upstream ahma-labs' livelog keys through MCP (SPEC §2 Compatibility): the SDK's real Client over
// InMemoryTransport, sources in the real sandbox, the endpoint llm-server.ts. Call parameters
// reach source_args and env as literal values, clear_command runs once before the source,
// prefilter_regex decides which lines the endpoint sees, structured_output loads with a warning,
// and ahma-labs' android-logcat.json (its source made `echo`) runs with its endpoint read from
// AHMA_LIVELOG_BASE_URL.
import { existsSync } from 'node:fs';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, type TestContext } from 'vitest';
import {
  E2E,
  readLog,
  structured,
  textOf,
  type CommandResult,
  type Operations,
  type RunningServer,
  type Scope,
  type StartedResult,
} from '../support/harness.js';
import { LlmServer } from '../support/llm-server.js';

const UPSTREAM_LIVELOG = fileURLToPath(
  new URL('../../../core/test/fixtures/upstream-livelog/', import.meta.url),
);

/** A fresh E2E and endpoint for one concurrent test, stopped when it ends. */
async function setup(context: TestContext): Promise<{ e2e: E2E; llm: LlmServer }> {
  const e2e = new E2E();
  const llm = new LlmServer();
  context.onTestFinished(async () => {
    await e2e.cleanup();
    await llm.stop();
  });
  await llm.start();
  return { e2e, llm };
}

interface Watch {
  readonly server: RunningServer;
  readonly scope: Scope;
  readonly llm: LlmServer;
}

/** A server whose only tool file is the livelog tool "watch" running `bash -c script`. */
async function watch(
  context: TestContext,
  script: string,
  livelog: Record<string, unknown> = {},
): Promise<Watch> {
  const { e2e, llm } = await setup(context);
  const scope = await e2e.scope({ noTools: true });
  await writeFile(
    join(scope.dir, '.ahma', 'tools', 'watch.json'),
    JSON.stringify({
      name: 'watch',
      description: 'Watch a test source.',
      command: 'bash',
      tool_type: 'livelog',
      livelog: {
        source_command: 'bash',
        source_args: ['-c', script],
        detection_prompt: 'Report any line containing PANIC.',
        llm_provider: { base_url: llm.baseUrl, model: 'tiny' },
        chunk_max_lines: 1,
        chunk_max_seconds: 1,
        cooldown_seconds: 0,
        llm_timeout_seconds: 5,
        ...livelog,
      },
    }),
  );
  return { server: await e2e.inProcess(scope), scope, llm };
}

/** Calls the tool and waits for the monitor's result. */
async function finished(
  server: RunningServer,
  tool: string,
  args: Record<string, unknown>,
): Promise<CommandResult> {
  const started = await server.call(tool, args);
  expect(started.isError ?? false, textOf(started)).toBe(false);
  const id = structured<StartedResult>(started).operation_id;
  const { operations } = structured<Operations>(
    await server.call('await', { ids: [id], timeout_seconds: 30 }),
  );
  const [result] = operations as CommandResult[];
  if (result === undefined) throw new Error('no result');
  return result;
}

describe.concurrent('livelog tools: upstream keys', { timeout: 60_000 }, () => {
  it('SPEC §2 livelog: call parameters reach source_args and env as literal values; shell metacharacters stay text', async (context) => {
    const script = 'printf "arg=%s\\n" "$@"; echo "env=$ANDROID_SERIAL"';
    const w = await watch(context, script, {
      source_args: ['-c', script, 'source', '--pid=${pid}', '${serial}'],
      parameters: [
        { name: 'serial', description: 'Device serial.', required: true },
        { name: 'pid', description: 'Process id.' },
      ],
      env: { ANDROID_SERIAL: '${serial}' },
    });
    const { tools } = await w.server.client.listTools();
    const listed = tools.find((tool) => tool.name === 'watch');
    expect(Object.keys(listed?.inputSchema.properties ?? {})).toEqual([
      'serial',
      'pid',
      'working_directory',
      'timeout_seconds',
      'max_output_tokens',
    ]);
    expect(listed?.inputSchema.required).toEqual(['serial']);

    const value = `emu'; touch pwned; echo $(id) \`id\` > pwned2 & \${pid}`;
    const given = await finished(w.server, 'watch', { serial: value, pid: '42' });
    expect(given.status).toBe('completed');
    expect(given.output).toContain(`arg=--pid=42\narg=${value}\nenv=${value}\n`);
    expect(existsSync(join(w.scope.dir, 'pwned'))).toBe(false);
    expect(existsSync(join(w.scope.dir, 'pwned2'))).toBe(false);
    expect(w.llm.chunks()).toContain(`env=${value}`);

    // An omitted optional parameter leaves its element out (no "--pid=").
    const omitted = await finished(w.server, 'watch', { serial: 'emulator-5554' });
    expect(omitted.output).toContain('arg=emulator-5554\nenv=emulator-5554\n');
    expect(omitted.output).not.toContain('--pid');

    // A required parameter missing is refused by the inputSchema before anything runs.
    const refused = await w.server.call('watch', {});
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('serial');
  });

  it('SPEC §2 livelog: clear_command runs once, before the source, unless the call says clear: false', async (context) => {
    const w = await watch(
      context,
      'echo "lines in the buffer: $(cat buffer.txt 2>/dev/null | wc -l)"',
      {
        clear_command: ['-c', 'echo cleared >> buffer.txt'],
      },
    );
    const { tools } = await w.server.client.listTools();
    expect(
      Object.keys(tools.find((tool) => tool.name === 'watch')?.inputSchema.properties ?? {}),
    ).toContain('clear');
    const first = await finished(w.server, 'watch', {});
    expect(first.output).toContain('lines in the buffer: 1\n');
    expect(await readFile(join(w.scope.dir, 'buffer.txt'), 'utf8')).toBe('cleared\n');
    const skipped = await finished(w.server, 'watch', { clear: false });
    expect(skipped.output).toContain('lines in the buffer: 1\n');
    // The clear run is audited like the source.
    const audited = (await readLog(w.scope)).lines
      .map((line) => (line['audit'] as { argv?: string[] } | undefined)?.argv)
      .filter((argv) => argv !== undefined);
    expect(audited.filter((argv) => argv.includes('echo cleared >> buffer.txt'))).toHaveLength(1);
  });

  it('SPEC §2 livelog: prefilter_regex drops non-matching lines before the endpoint; the result keeps them', async (context) => {
    const w = await watch(
      context,
      'echo "I/Boot: ok"; echo "E/App: PANIC in main"; echo "D/Net: fine"',
      {
        prefilter_regex: '(?i)(fatal|panic|^E/)',
      },
    );
    const result = await finished(w.server, 'watch', {});
    expect(w.llm.chunks()).toEqual(['E/App: PANIC in main']);
    expect(result.output).toContain('I/Boot: ok\nE/App: PANIC in main\nD/Net: fine\n');
    expect(result.output).toContain(
      'ahma livelog: 1 of 3 lines passed prefilter_regex; 1 chunk checked',
    );
  });

  it('SPEC §2 livelog: structured_output and an unknown key load with warnings; the tool is served', async (context) => {
    const w = await watch(context, 'echo fine', { structured_output: true, chunk_max_line: 5 });
    const { tools } = await w.server.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('watch');
    const log = (await readLog(w.scope)).text;
    expect(log).toContain(
      'tool definition warning (loaded): ' +
        `${join(w.scope.dir, '.ahma', 'tools', 'watch.json')}#/livelog/structured_output: warning: structured_output is ignored`,
    );
    expect(log).toContain(
      '#/livelog/chunk_max_line: warning: \\"chunk_max_line\\" is not a livelog key Ahma knows; it is ignored (did you mean \\"chunk_max_lines\\"?)',
    );
    expect((await finished(w.server, 'watch', {})).status).toBe('completed');
  });

  it('SPEC §2 livelog: ahma-labs android-logcat.json runs: its endpoint from AHMA_LIVELOG_BASE_URL, its clear run, its prefilter', async (context) => {
    const { e2e, llm } = await setup(context);
    const base = await e2e.scope({ noTools: true });
    const scope = { ...base, env: { ...base.env, AHMA_LIVELOG_BASE_URL: llm.baseUrl } };
    await copyFile(
      join(UPSTREAM_LIVELOG, 'ahma-labs', 'android-logcat.json'),
      join(scope.dir, '.ahma', 'tools', 'android-logcat.json'),
    );
    const server = await e2e.inProcess(scope);
    const result = await finished(server, 'android-logcat', {
      pid: '1234',
      serial: 'emulator-5554',
    });
    expect(result.status, result.output).toBe('completed');
    // `echo` prints the argv upstream builds; the line shows no error, so the prefilter keeps it
    // from the endpoint.
    expect(result.output).toBe(
      `logcat -b main,crash,system -v threadtime --pid=1234\nahma livelog: 0 of 1 line passed prefilter_regex; 0 chunks checked by lfm2.5:8b at ${llm.baseUrl}; 0 issues found; 0 alerts raised\n`,
    );
    expect(llm.chunks()).toEqual([]);
    const audited = (await readLog(scope)).lines
      .map((line) => (line['audit'] as { argv?: string[] } | undefined)?.argv)
      .filter((argv) => argv !== undefined);
    expect(audited).toContainEqual(['echo', 'logcat', '-c']);
  });
});
