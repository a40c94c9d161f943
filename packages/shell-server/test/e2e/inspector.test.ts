// The official MCP Inspector CLI (2.x, on a pinned Node 22 from npm) against the built server:
// scripts/inspector-check.sh lists the tools and calls sandboxed_shell. Skipped, with the reason,
// only when the npm registry is unreachable and nothing is cached (the script exits 77).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { childEnv, E2E, PACKAGE_DIR } from '../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const SCRIPT = join(PACKAGE_DIR, 'scripts', 'inspector-check.sh');
const BUDGET_MS = 120_000;

describe('MCP Inspector', () => {
  it(
    'SPEC §3: the official MCP Inspector CLI lists the tools and gets sandboxed_shell output over stdio',
    async (context) => {
      const started = Date.now();
      const result = await e2e.runCommand('bash', [SCRIPT], {
        env: childEnv(),
        timeoutMs: BUDGET_MS,
      });
      const elapsed = Date.now() - started;
      if (result.code === 77)
        context.skip(result.stderr.trim() || 'the npm registry is unreachable');
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toContain('"name": "sandboxed_shell"');
      expect(result.stdout).toContain('inspector-ok');
      expect(result.stdout).toMatch(/MCP Inspector 2\.\d+\.\d+ on Node v22\./);
      // SPEC §12: the 2026-07-28 era gets a long command's output too.
      expect(result.stdout).toContain('--protocol-era modern');
      expect(result.stdout).toContain('modern-ok');
      expect(result.stdout).toContain('inspector-check: OK');
      expect(elapsed).toBeLessThan(BUDGET_MS);
    },
    BUDGET_MS + 10_000,
  );
});
