// The official MCP conformance suite (@modelcontextprotocol/conformance, on a pinned Node 22 from
// npm) against the built server over Streamable HTTP: scripts/conformance-check.sh starts
// `ahma-shell --mode http --http-port 0`, runs the server scenarios with the baseline
// conformance/expected-failures.yml and stops the server. Skipped, with the reason, only when the
// script exits 77: the npm registry is unreachable and nothing is cached. The two eras run at once
// (each run has its own server, scope and directories; node22.sh installs are safe to race).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { childEnv, it, PACKAGE_DIR } from '../support/harness.js';

const SCRIPT = join(PACKAGE_DIR, 'scripts', 'conformance-check.sh');
const BASELINE = join(PACKAGE_DIR, 'conformance', 'expected-failures.yml');
const BASELINE_2026 = join(PACKAGE_DIR, 'conformance', 'expected-failures-2026-07-28.yml');
const BUDGET_MS = 180_000;

/** The scenarios Ahma must pass: the generic ones, which need none of the reference fixtures. */
const MUST_PASS = [
  'server-initialize',
  'server-session-lifecycle',
  'logging-set-level',
  'ping',
  'tools-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

/** The 2026-07-28 and SEP-2663 scenarios Ahma must pass whole. */
const MUST_PASS_2026 = [
  'tools-list',
  'dns-rebinding-protection',
  'http-header-validation',
  'server-sse-multiple-streams',
];

/** The scenarios a baseline names (an entry is `scenario` or `scenario:check-id`). */
function baselinedScenarios(baseline = BASELINE): Set<string> {
  const entries = readFileSync(baseline, 'utf8').matchAll(/^ {2}- ([\w-]+)(?::[\w-]+)?/gm);
  return new Set([...entries].map((match) => match[1] ?? ''));
}

describe.concurrent('MCP conformance suite', () => {
  it(
    'SPEC §6: the official MCP conformance suite passes over Streamable HTTP, but for the baselined scenarios',
    async ({ e2e, skip }) => {
      const started = Date.now();
      const result = await e2e.runCommand('bash', [SCRIPT], {
        env: childEnv(),
        timeoutMs: BUDGET_MS,
      });
      const elapsed = Date.now() - started;
      if (result.code === 77) {
        const reason = /conformance-check: SKIPPED: .*/.exec(result.stderr)?.[0];
        skip(reason ?? (result.stderr.trim() || 'conformance-check.sh exited 77'));
      }
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(result.stdout).toMatch(
        /@modelcontextprotocol\/conformance 0\.2\.0-alpha\.\d+ on Node v22\./,
      );
      for (const scenario of MUST_PASS) expect(result.stdout).toContain(`✓ ${scenario}: `);
      const summary = /^conformance-check: OK \((\d+) passed, (\d+) expected failures\)$/m.exec(
        result.stdout,
      );
      expect(summary, result.stdout).not.toBeNull();
      const passed = Number(summary?.[1]);
      const expectedFailures = Number(summary?.[2]);
      expect(passed).toBeGreaterThanOrEqual(MUST_PASS.length);
      // Every baselined scenario ran and failed as expected (one that passes fails the script).
      expect(expectedFailures).toBe(baselinedScenarios().size);
      expect(elapsed).toBeLessThan(BUDGET_MS);
    },
    BUDGET_MS + 10_000,
  );

  it(
    'SPEC §12: the 2026-07-28 scenarios of the suite and every SEP-2663 tasks scenario pass, but for the baselined checks',
    async ({ e2e, skip }) => {
      const result = await e2e.runCommand('bash', [SCRIPT], {
        env: { ...childEnv(), CONFORMANCE_CHECK_ERA: '2026' },
        timeoutMs: BUDGET_MS,
      });
      if (result.code === 77) {
        const reason = /conformance-check: SKIPPED: .*/.exec(result.stderr)?.[0];
        skip(reason ?? (result.stderr.trim() || 'conformance-check.sh exited 77'));
      }
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
      for (const scenario of MUST_PASS_2026) expect(result.stdout).toContain(`✓ ${scenario}: `);
      // The tasks scenarios ran, each judged by the baseline (a failure outside it fails the run).
      for (const scenario of [
        'tasks-lifecycle',
        'tasks-capability-negotiation',
        'tasks-wire-fields',
      ]) {
        expect(result.stdout).toContain(`=== conformance server --scenario ${scenario}`);
      }
      expect(result.stdout).not.toContain('Unexpected failures');
      expect(baselinedScenarios(BASELINE_2026).size).toBeGreaterThan(0);
    },
    BUDGET_MS + 10_000,
  );
});
