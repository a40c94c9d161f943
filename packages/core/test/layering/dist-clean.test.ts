// ARCHITECTURE: core is protocol-agnostic. The built output must not pull in the MCP SDK or pino,
// nor end the process on its own (the MCP TypeScript SDK guards its barrel the same way).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../../dist', import.meta.url));

describe('built @ahma/core', () => {
  it('ARCH: imports neither the MCP SDK nor pino, and never calls process.exit', async () => {
    const files = (await readdir(dist)).filter((file) => file.endsWith('.js'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const code = await readFile(join(dist, file), 'utf8');
      expect(code, file).not.toMatch(/@modelcontextprotocol/);
      expect(code, file).not.toMatch(/from\s+["']pino["']|require\(["']pino["']\)/);
      expect(code, file).not.toMatch(/process\.exit\(/);
    }
  });
});
