#!/usr/bin/env node
// Prints the whole suite's total as one plain line ("N passed, N failed, N skipped") from the JSON
// reports vitest wrote in each package, so CI logs end with a single, greppable verdict.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const totals = { passed: 0, failed: 0, skipped: 0 };
for (const name of readdirSync('packages')) {
  const report = join('packages', name, 'test-results.json');
  if (!existsSync(report)) continue;
  const result = JSON.parse(readFileSync(report, 'utf8'));
  totals.passed += result.numPassedTests;
  totals.failed += result.numFailedTests;
  totals.skipped += result.numPendingTests + result.numTodoTests;
}
process.stdout.write(
  `${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`,
);
process.exitCode = totals.failed > 0 || totals.passed === 0 ? 1 : 0;
