// Logging (R16, NFR4.3) and the purity of stdout: by default pino writes a daily rolling file under
// $XDG_CACHE_HOME/ahma/logs without colours, with one audit line per execution; --log-to-stderr
// writes readable lines on stderr; in every mode stdout carries only JSON-RPC. Each test has its
// own scope (and so its own log file) and servers; they run at once.
import { describe, expect } from 'vitest';
import {
  it,
  RawSession,
  readLog,
  structured,
  type CommandResult,
  type E2E,
  type Scope,
} from '../support/harness.js';

const ESC = String.fromCharCode(0x1b);
/** The start of an ANSI escape sequence (colours). */
const ANSI = new RegExp(`${ESC}\\[`);
const ANSI_COLOUR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/** Every line the server wrote on stdout is a JSON-RPC 2.0 message, and nothing else came. */
function expectOnlyJsonRpc(session: RawSession): void {
  expect(session.partialLine).toBe('');
  expect(session.stdoutLines.length).toBeGreaterThan(0);
  for (const line of session.stdoutLines) {
    let message: unknown;
    expect(() => (message = JSON.parse(line)), line).not.toThrow();
    expect(message, line).toMatchObject({ jsonrpc: '2.0' });
  }
}

/** A session that makes the server log and run commands printing to both streams. */
async function busySession(e2e: E2E, scope: Scope, args: readonly string[]): Promise<RawSession> {
  const session = new RawSession(e2e, scope, args);
  await session.initialize();
  await session.request(1, 'tools/list');
  await session.request(2, 'tools/call', { name: 'e2e_sync', arguments: { value: 'to stdout?' } });
  await session.request(3, 'tools/call', { name: 'fails', arguments: {} });
  const started = await session.request(4, 'tools/call', {
    name: 'sandboxed_shell',
    arguments: { command: 'echo out-line; echo err-line >&2; printf "{not json"' },
    _meta: { progressToken: 'raw-token' },
  });
  const id = (started['result'] as { structuredContent: { operation_id: string } })
    .structuredContent.operation_id;
  await session.request(5, 'tools/call', { name: 'await', arguments: { ids: [id] } });
  await session.request(6, 'tools/call', {
    name: 'files_show',
    arguments: { path: '/etc/passwd' },
  });
  await session.request(7, 'tools/call', { name: 'no_such_tool', arguments: {} });
  return session;
}

describe.concurrent('log file (default)', { timeout: 60_000 }, () => {
  it('R16: the daily log file under $XDG_CACHE_HOME/ahma/logs holds JSON lines without ANSI colours', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ invalid: true });
    const server = await e2e.server(scope);
    await server.call('e2e_sync', { value: 'logged' });
    await server.close();
    const log = await readLog(scope);
    expect(log.files).toHaveLength(1);
    expect(log.files[0]).toMatch(/^ahma-\d{4}-\d{2}-\d{2}\.log$/);
    expect(log.text).not.toMatch(ANSI);
    expect(log.lines.length).toBeGreaterThan(0);
    for (const line of log.lines) {
      expect(line).toMatchObject({
        level: expect.any(Number),
        time: expect.any(Number),
        msg: expect.any(String),
      });
      expect(line['level']).toBeGreaterThanOrEqual(30); // info by default: no debug lines
    }
    expect(log.lines.map((line) => line['msg'])).toContain('engine ready');
    expect(server.stderr()).toBe('');
  });

  it('NFR4.3: every execution is logged for audit with tool, argv, scope, cwd, status, exit_code and duration_ms', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.server(scope);
    const ok = structured<CommandResult>(await server.call('e2e_sync', { value: 'audit me' }));
    const failed = structured<CommandResult>(await server.call('fails'));
    const timedOut = structured<CommandResult>(await server.call('slow'));
    await server.close();
    const audits = (await readLog(scope)).lines.filter((line) => line['msg'] === 'execution');
    const audit = (id: string) =>
      audits.find((line) => (line['audit'] as { operation: string }).operation === id)?.['audit'];
    expect(audits).toHaveLength(3);
    expect(audit(ok.operation_id)).toEqual({
      operation: ok.operation_id,
      tool: 'e2e_sync',
      argv: ['printf', '%s\\n', 'sync', '--value', 'audit me'],
      argv_elided: false,
      argv_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      scope: scope.dir,
      cwd: scope.dir,
      status: 'completed',
      exit_code: 0,
      signal: null,
      duration_ms: expect.any(Number),
    });
    expect(audit(failed.operation_id)).toMatchObject({
      tool: 'fails',
      status: 'failed',
      exit_code: 4,
    });
    expect(audit(timedOut.operation_id)).toMatchObject({
      tool: 'slow',
      argv: ['sleep', '30'],
      status: 'timed_out',
      exit_code: null,
    });
  });

  it('NFR4.3: sandboxed_shell executions are audited with their script and working directory', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.server(scope, ['--sync']);
    await server.call('sandboxed_shell', { command: 'mkdir -p d' });
    const result = structured<CommandResult>(
      await server.call('sandboxed_shell', { command: 'exit 9', working_directory: 'd' }),
    );
    await server.close();
    const audit = (await readLog(scope)).lines.find(
      (line) =>
        line['msg'] === 'execution' &&
        (line['audit'] as { operation: string }).operation === result.operation_id,
    )?.['audit'];
    expect(audit).toMatchObject({
      tool: 'sandboxed_shell',
      argv: ['bash', '--noprofile', '--norc', '-c', 'exit 9'],
      scope: scope.dir,
      cwd: `${scope.dir}/d`,
      status: 'failed',
      exit_code: 9,
      duration_ms: expect.any(Number),
    });
  });

  it('R16: in the default mode stdout carries nothing but JSON-RPC and stderr stays silent', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ invalid: true });
    const session = await busySession(e2e, scope, []);
    expect(await session.end()).toEqual({ code: 0, signal: null });
    expectOnlyJsonRpc(session);
    expect(session.stderr).toBe('');
    // The command's own output reached the client inside results, never as raw lines.
    expect(
      session.stdoutLines.some(
        (line) => line.startsWith('out-line') || line.startsWith('{not json'),
      ),
    ).toBe(false);
    expect((await readLog(scope)).lines.some((line) => line['msg'] === 'execution')).toBe(true);
  });
});

describe.concurrent('--debug', { timeout: 60_000 }, () => {
  it('R16: --debug adds debug-level lines (each tools/list and tools/call) to the log file', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.server(scope, ['--debug']);
    await server.client.listTools();
    await server.call('e2e_sync', { value: 'debugged' });
    await server.close();
    const log = await readLog(scope);
    const debug = log.lines.filter((line) => line['level'] === 20);
    expect(debug.map((line) => line['msg'])).toEqual(
      expect.arrayContaining(['tools/list', 'tools/call']),
    );
    expect(debug.find((line) => line['msg'] === 'tools/call')).toMatchObject({ tool: 'e2e_sync' });
  });

  it('R7.12: --debug starts the log with the doctor table: what the sandbox enforces here', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.server(scope, ['--debug']);
    await server.close();
    const log = await readLog(scope);
    const doctor = log.lines.find((line) => String(line['msg']).startsWith('ahma-shell doctor'));
    expect(doctor?.['level']).toBe(20);
    expect(String(doctor?.['msg'])).toMatch(/writes outside the scope\s+enforced by kernel/);
    expect(String(doctor?.['msg'])).toMatch(/reads of secrets\s+enforced by kernel/);
  });
});

describe.concurrent('--log-to-stderr', { timeout: 60_000 }, () => {
  it('R16: --log-to-stderr puts readable coloured lines on stderr and nothing but JSON-RPC on stdout', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ invalid: true });
    const session = await busySession(e2e, scope, ['--log-to-stderr']);
    expect(await session.end()).toEqual({ code: 0, signal: null });
    expectOnlyJsonRpc(session);
    // Human-readable (pino-pretty): "[time] LEVEL (pid): message", not JSON lines.
    const plain = session.stderr.replace(ANSI_COLOUR, '');
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO \(\d+\): engine ready$/m);
    expect(plain).toMatch(/WARN \(\d+\): tool definition rejected: .*typo\.json/);
    expect(plain).toMatch(/INFO \(\d+\): execution$/m);
    expect(plain.split('\n').some((line) => line.startsWith('{'))).toBe(false);
    expect(session.stderr).toMatch(ANSI);
    // The log goes to stderr instead of the file.
    expect((await readLog(scope)).files).toEqual([]);
  });
});
