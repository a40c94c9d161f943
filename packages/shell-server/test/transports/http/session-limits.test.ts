// R8.4: the session caps a command line gives (transports/http/sessions.ts): 100 sessions by
// default, 16 with --session-isolation (each is a process), --max-sessions over either; the memory
// budget only with isolation. The red-team flood (red-team/control-plane.test.ts) shows a cap
// holding against a command; this pins the defaults it does not start.
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/options.js';
import { sessionLimitsOf } from '../../../src/transports/http/sessions.js';

function limitsOf(...flags: string[]) {
  const parsed = parseCommandLine(['--mode', 'http', ...flags], {});
  if (parsed.kind !== 'run') throw new Error(`not a server command line: ${flags.join(' ')}`);
  return sessionLimitsOf(parsed.options);
}

describe('session limits from the command line', () => {
  it('R8.4: 100 sessions by default, 16 with --session-isolation, --max-sessions over either', () => {
    expect(limitsOf().maxSessions).toBe(100);
    expect(limitsOf('--session-isolation').maxSessions).toBe(16);
    expect(limitsOf('--max-sessions', '4').maxSessions).toBe(4);
    expect(limitsOf('--session-isolation', '--max-sessions', '40').maxSessions).toBe(40);
  });

  it('R8.4: the memory budget applies only to isolated sessions (2048 MiB by default)', () => {
    expect(limitsOf().sessionMemoryMb).toBeUndefined();
    expect(limitsOf('--session-isolation').sessionMemoryMb).toBe(2048);
    expect(limitsOf('--session-isolation', '--session-memory-mb', '512').sessionMemoryMb).toBe(512);
  });
});
