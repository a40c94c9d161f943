// R15.4: an interactive command through a real engine (with its warm pool, which interactive
// commands bypass): its stdin is open, the conversation is reachable by log name while it runs and
// gone after; with a pty the command has a terminal of its own, its size and TERM; one left silent
// for its idle time is ended (timed_out, with a note saying why).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { engineFixture, type EngineFixture } from '../support/engine.js';

let fixture: EngineFixture;

beforeEach(async () => {
  fixture = await engineFixture({ noShellPool: false });
});

afterEach(async () => {
  await fixture.dispose();
});

const waitFor = async <T>(probe: () => T | undefined): Promise<T> => {
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('interactive commands', () => {
  it('R15.4: stdin stays open: what is written reaches the command, and the answer comes back', async () => {
    const { engine, scope } = fixture;
    const running = engine.executor.run({
      command: { kind: 'shell', script: 'read a; echo "first $a"; read b; echo "second $b"' },
      cwd: scope,
      logName: 'op_i1',
      interactive: {},
    });
    const conversation = await waitFor(() => engine.executor.conversation('op_i1'));
    expect((await conversation.send('one\n', 5000)).output).toBe('first one\n');
    const last = await conversation.send('two\n', 5000);
    expect(last.output).toBe('second two\n');
    const result = await running;
    expect(result.status).toBe('completed');
    expect(result.output).toBe('first one\nsecond two\n');
    expect(engine.executor.conversation('op_i1')).toBeUndefined();
    await expect(conversation.send('three\n', 100)).rejects.toThrow(/has ended/);
  });

  it('R15.4: with a pty the command has a terminal of its own, its size and TERM', async () => {
    const { engine, scope } = fixture;
    const result = await engine.executor.run({
      command: {
        kind: 'shell',
        script: 'tty; stty size; echo "$TERM"; test -t 1 && echo out-is-tty',
      },
      cwd: scope,
      logName: 'op_i2',
      interactive: { pty: { cols: 90, rows: 20 } },
    });
    expect(result.status).toBe('completed');
    expect(result.output).toMatch(/^\/dev\/pts\/\d+\r?$/m);
    expect(result.output).toContain('20 90');
    expect(result.output).toContain('xterm-256color');
    expect(result.output).toContain('out-is-tty');
  });

  it('R15.4: an interactive command left without input or output for its idle time is ended', async () => {
    const { engine, scope } = fixture;
    const result = await engine.executor.run({
      command: { kind: 'shell', script: 'echo waiting; read never' },
      cwd: scope,
      logName: 'op_i3',
      interactive: { pty: { cols: 80, rows: 24 }, idleMs: 300 },
    });
    expect(result.status).toBe('timed_out');
    expect(result.output).toContain('waiting');
    expect(result.output).toContain('without input or output');
  });

  it('R15.4: a malformed terminal size is refused by the helper, and nothing runs', async () => {
    const { engine, scope } = fixture;
    const result = await engine.executor.run({
      command: { kind: 'argv', argv: ['true'] },
      cwd: scope,
      logName: 'op_i4',
      interactive: { pty: { cols: 0, rows: 24 } },
    });
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(/--pty needs COLSxROWS/);
  });
});
