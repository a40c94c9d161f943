// Fails any test that writes through console.*: in the server, stdout belongs to the MCP protocol,
// so a stray console call is a bug, not a debugging aid (zod's test setup guards the same way).
import { afterEach, vi } from 'vitest';

const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
const spies = methods.map((method) => vi.spyOn(console, method));

/**
 * What a test's own fixture says, never the code under test: the OAuth test server of remote's
 * tests (oidc-provider) announces its development mode. Its file drops those lines too, but a
 * worker that keeps its modules from file to file (isolate: false) can spy on console around that
 * filter, so they are let through here as well.
 */
const fixtureNoise = (call: unknown[]) =>
  typeof call[0] === 'string' && call[0].startsWith('oidc-provider ');

afterEach(() => {
  for (const spy of spies) {
    const calls = spy.mock.calls.filter((call) => !fixtureNoise(call));
    spy.mockClear();
    if (calls.length > 0) {
      throw new Error(`unexpected console output: ${JSON.stringify(calls[0])}`);
    }
  }
});
