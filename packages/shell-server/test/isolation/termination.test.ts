// R8D.13, R8.5, R8D.7: a session that ended by itself answers its requests with one error naming
// the cause and telling the client to start a new session; -32603 when its process failed (the
// server's side), -32600 when the client's roots are the cause.
import { describe, expect, it } from 'vitest';
import {
  diedAgain,
  initializeRefused,
  initializeUnanswered,
  invalidRoot,
  refusalCode,
  rootsChanged,
} from '../../src/isolation/termination.js';

describe.concurrent('termination', () => {
  it("R8.5, R8D.13: a failed process is the server's side (-32603), the client's roots the client's (-32600)", () => {
    expect(refusalCode('child_failed')).toBe(-32603);
    expect(refusalCode('roots_changed')).toBe(-32600);
    expect(refusalCode('invalid_root')).toBe(-32600);
  });

  it('R8D.12, R8D.13: roots changed after the lock name the locked scope and say to start a new session', () => {
    const ending = rootsChanged('/work/a');
    expect(ending.reason).toBe('roots_changed');
    expect(ending.message).toContain('locked to /work/a');
    expect(ending.message).toMatch(/start a new session$/);
  });

  it('R8D.7: an unusable first root says why and what a root must be', () => {
    const ending = invalidRoot('the root / is the filesystem root');
    expect(ending.reason).toBe('invalid_root');
    expect(ending.message).toContain('cannot start: the root / is the filesystem root.');
    expect(ending.message).toContain("within the server's allowed roots");
  });

  it('R8.5, R8D.14: a process that fails the handshake or dies again ends the session as child_failed', () => {
    expect(initializeRefused('bad').message).toContain("refused the session's initialize (bad)");
    expect(initializeUnanswered(30_000).message).toContain('within 30 s');
    expect(diedAgain('exit code 1').message).toContain(
      'exited (exit code 1) again soon after a restart',
    );
    for (const ending of [initializeRefused('x'), initializeUnanswered(1000), diedAgain('y')]) {
      expect(ending.reason).toBe('child_failed');
      expect(ending.message).toMatch(/start a new session$/);
    }
  });
});
