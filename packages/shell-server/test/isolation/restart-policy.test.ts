// R8.5: a session's process that dies is replaced once; dying again within the restart window
// ends the session. Its open tools/call requests fail (whether their command ran is unknown), its
// other open requests are sent again. Pure functions: no process is started here.
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import {
  CrashWindow,
  DEFAULT_RESTART_WINDOW_MS,
  afterCrash,
  callLost,
  describeExit,
  splitOpenRequests,
} from '../../src/isolation/restart-policy.js';

const request = (id: number, method: string): JSONRPCRequest => ({ jsonrpc: '2.0', id, method });

describe.concurrent('restart policy', () => {
  it('R8.5: a crash is restarted; another within the window ends the session', () => {
    const window = new CrashWindow(1000);
    expect(window.crashed(10_000)).toBe('restart');
    expect(window.crashed(10_999)).toBe('end');
  });

  it('R8.5: a crash after the window is restarted again, and starts a new window', () => {
    const window = new CrashWindow(1000);
    expect(window.crashed(10_000)).toBe('restart');
    expect(window.crashed(11_000)).toBe('restart');
    expect(window.crashed(11_500)).toBe('end');
  });

  it('R8.5: the window is 30 s unless told otherwise', () => {
    expect(DEFAULT_RESTART_WINDOW_MS).toBe(30_000);
    const window = new CrashWindow();
    expect(window.crashed(0)).toBe('restart');
    expect(window.crashed(29_999)).toBe('end');
  });

  it('R8.5: a crashed process is replaced on the scope once it is locked; before, none runs', () => {
    expect(afterCrash('init')).toBe('none');
    expect(afterCrash('initializing')).toBe('none');
    expect(afterCrash('roots')).toBe('none');
    expect(afterCrash('starting')).toBe('restart_on_scope');
    expect(afterCrash('ready')).toBe('restart_on_scope');
    expect(afterCrash('ended')).toBe('none');
  });

  it('R8.5: of the open requests the calls fail and the others are sent again, each in its order', () => {
    const open = [
      request(1, 'tools/call'),
      request(2, 'tools/list'),
      request(3, 'tools/call'),
      request(4, 'resources/list'),
    ];
    const { failed, resent } = splitOpenRequests(open);
    expect(failed.map((r) => r.id)).toEqual([1, 3]);
    expect(resent.map((r) => r.id)).toEqual([2, 4]);
  });

  it('R8.5: a lost call is answered -32603 on its id, saying the process exited and the command may have run', () => {
    const answer = callLost(request(5, 'tools/call'), 'killed by SIGKILL');
    expect(answer.id).toBe(5);
    expect(answer.error.code).toBe(-32603);
    expect(answer.error.message).toContain('(killed by SIGKILL)');
    expect(answer.error.message).toContain('whether the command ran is unknown');
  });

  it("R8.5: an exit is described by its cause, with the process's last words", () => {
    expect(describeExit({ code: 3, signal: null }, undefined)).toBe('exit code 3');
    expect(describeExit({ code: null, signal: 'SIGKILL' }, undefined)).toBe('killed by SIGKILL');
    expect(
      describeExit({ code: null, signal: null, error: new Error('spawn x ENOENT') }, 'gone'),
    ).toBe('it could not be started: spawn x ENOENT; it said: gone');
  });
});
