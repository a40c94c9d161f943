// R15.4: interactive commands through a server made from its command line in this process and the
// SDK client. `python3 -i` under `pty: true` answers `print(6*7)` with 42 through write_stdin;
// `tty` prints a /dev/pts path; `stdin: "open"` feeds a plain pipe; cancel ends a waiting REPL; a
// command that is not interactive, or has ended, is refused; an idle one is ended by the server.
import { describe, expect } from 'vitest';
import {
  it,
  structured,
  textOf,
  waitFor,
  type RunningServer,
  type StartedResult,
} from '../support/harness.js';

/** Starts an interactive command and returns its operation id (it is still running). */
async function start(server: RunningServer, args: Record<string, unknown>): Promise<string> {
  const started = structured<StartedResult>(await server.call('sandboxed_shell', args));
  expect(started.status).toBe('started');
  return started.operation_id;
}

const write = async (server: RunningServer, id: string, input: string, waitMs = 5000) =>
  server.call('write_stdin', { id, input, wait_ms: waitMs });

describe.concurrent('interactive commands', { timeout: 60_000 }, () => {
  it('R15.4: python3 -i under pty: true answers print(6*7) with 42 through write_stdin, and exit() ends it', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const id = await start(server, { command: 'python3 -i -q', pty: true });
    const answer = await write(server, id, 'print(6*7)\n');
    expect(textOf(answer)).toMatch(/^42\r?$/m);
    const bye = await write(server, id, 'exit()\n');
    expect(structured<{ ended: boolean }>(bye).ended).toBe(true);
    const [done] = structured<{ operations: { status: string; exit_code: number }[] }>(
      await server.call('await', { ids: [id] }),
    ).operations;
    expect(done).toMatchObject({ status: 'completed', exit_code: 0 });
  });

  it('R15.4: a pty command has a terminal of its own (tty prints /dev/pts/N), TERM and its size', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const result = await server.call('sandboxed_shell', {
      command: 'tty; echo "$TERM"; stty size',
      pty: true,
    });
    const text = textOf(result);
    expect(text).toMatch(/\/dev\/pts\/\d+/);
    expect(text).toContain('xterm-256color');
    expect(text).toContain('40 120');
  });

  it('R15.4: stdin "open" feeds a plain pipe (no terminal)', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const id = await start(server, {
      command: 'test -t 0 || echo no-terminal; read line; echo "got $line"',
      stdin: 'open',
    });
    const answer = await write(server, id, 'hello\n');
    expect(textOf(answer)).toContain('got hello');
  });

  it('R15.4: cancel ends a waiting REPL; writing to an ended or a non-interactive command is refused', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope(), ['--inline-wait', '0']);
    const id = await start(server, { command: 'python3 -i -q', pty: true });
    await server.call('cancel', { id });
    await waitFor(
      async () =>
        structured<{ operations: { status: string }[] }>(await server.call('status', { ids: [id] }))
          .operations[0]?.status === 'cancelled',
      'the REPL to be cancelled',
    );
    expect(textOf(await write(server, id, 'x\n'))).toContain('has ended');
    const plain = await start(server, { command: 'sleep 5' });
    expect(textOf(await write(server, plain, 'x\n'))).toContain('is not interactive');
    await server.call('cancel', { id: plain });
    expect(textOf(await write(server, 'op_nope', 'x\n'))).toContain('no operation op_nope');
  });

  it('R15.4: the terminal is the command’s own: TIOCSTI is refused and writes stay confined', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const outside = await e2e.outsideDir();
    const text = textOf(
      await server.call('sandboxed_shell', {
        command: `python3 -c 'import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b"x")' 2>&1 | tail -1; echo x > ${outside}/pty-escape 2>&1 || echo write-refused`,
        pty: true,
      }),
    );
    expect(text).toContain('Operation not permitted');
    expect(text).toContain('write-refused');
  });
});
