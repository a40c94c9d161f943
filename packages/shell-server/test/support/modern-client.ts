// The SDK v2 client of the 2026-07-28 era over the real binary's stdio: pinned to that revision
// (or negotiating), closed at the E2E's cleanup.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, type E2E, type Scope } from './harness.js';

export const MODERN = '2026-07-28';

export async function modernStdioClient(
  e2e: E2E,
  scope: Scope,
  args: readonly string[] = [],
  mode: 'pin' | 'auto' = 'pin',
  env: Record<string, string> = {},
): Promise<Client> {
  const client = new Client(
    { name: 'v2-client', version: '1.0.0' },
    { versionNegotiation: { mode: mode === 'pin' ? { pin: MODERN } : 'auto' } },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--mode', 'stdio', '--sandbox-scope', scope.dir, ...args],
      env: { ...scope.env, ...env },
      cwd: scope.dir,
      stderr: 'pipe',
    }),
  );
  e2e.onCleanup(() => client.close());
  return client;
}
