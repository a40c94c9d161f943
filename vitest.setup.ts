// Fails any test that writes through console.*: in the server, stdout belongs to the MCP protocol,
// so a stray console call is a bug, not a debugging aid (zod's test setup guards the same way).
import { afterEach, vi } from 'vitest';

const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
const spies = methods.map((method) => vi.spyOn(console, method));

afterEach(() => {
  for (const spy of spies) {
    const calls = spy.mock.calls;
    spy.mockClear();
    if (calls.length > 0) {
      throw new Error(`unexpected console output: ${JSON.stringify(calls[0])}`);
    }
  }
});
