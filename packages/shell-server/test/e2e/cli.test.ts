// ahma-shell's command line, run as a process: the smoke tests that need the binary itself — the
// refused mode (a TTY on stdin), the stdio server ending with its client or a SIGTERM, and one
// one-shot run.
// The rest of the command line runs in-process: test/cli/command-line.test.ts.
import { describe, expect } from 'vitest';
import { BIN, it, RawSession, waitFor } from '../support/harness.js';

/** Quotes a word for the `sh -c` line util-linux `script` runs. */
const sh = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

describe.concurrent('usage and flags', { timeout: 60_000 }, () => {
  it('R8.10: stdio mode refuses to run on a TTY, exits non-zero and explains how to register it (claude mcp add)', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    // util-linux script gives the server a pseudo-terminal as stdin/stdout; -e returns its exit code.
    const line = [process.execPath, BIN, '--mode', 'stdio', '--sandbox-scope', scope.dir]
      .map(sh)
      .join(' ');
    const result = await e2e.runCommand('script', ['-qec', line, '/dev/null'], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stdout).toContain('claude mcp add');
    expect(result.stdout).toContain('--mode stdio');
    expect(result.stdout).toMatch(/MCP client/);
  });

  it('R8.10: the stdio server exits 0 when its client closes stdin', async ({ e2e }) => {
    const scope = await e2e.scope();
    // stdin is /dev/null: the "client" leaves at once.
    const result = await e2e.run(['--mode', 'stdio', '--sandbox-scope', scope.dir], {
      cwd: scope.dir,
      env: scope.env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
  });

  it('R8.10: SIGTERM ends the stdio server with 0 even before its client sent anything', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = new RawSession(e2e, scope, ['--log-to-stderr']);
    // Its handlers are in place once its runtime is (the log says so).
    await waitFor(() => server.stderr.includes('engine ready'), 'the server to start', 45_000);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

describe.concurrent('one-shot CLI', { timeout: 60_000 }, () => {
  it('R8.9: --tool_name sandboxed_shell --tool_args runs it synchronously, prints its output and exits with its code', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const result = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--tool_args', '{"command":"echo hi; exit 3"}'],
      {
        cwd: scope.dir,
        env: scope.env,
      },
    );
    expect(result.stdout).toBe('hi\n');
    expect(result.code).toBe(3);
  });
});
