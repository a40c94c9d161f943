// SPEC §15 introspection quality: the tests both quality files make. Each case parses a recorded
// help with its family's parser, measures it against the program's documented interface
// (test/support/measure.ts) and asserts the row against a floor.
import { describe, expect, it } from 'vitest';
import { fromModel, measure, percent, readExpected, readFixture } from '../../support/measure.js';
import type { QualityCase } from '../../support/quality-cases.js';

export { readFixture };

/** One test per case, named with its table row and annotated with what it missed. */
export function qualityTests(families: string, cases: readonly QualityCase[]): void {
  describe(`SPEC §15 introspection quality: measured against the documentation (${families})`, () => {
    for (const entry of cases) {
      const row = measure(
        fromModel(entry.parser.parse(readFixture(`help/${entry.fixture}.txt`), entry.program)),
        readExpected(entry.expected),
      );
      const [found, total] = row.options;
      const [commandsFound, commandsTotal] = row.subcommands;
      const title =
        `| ${entry.program} | ${String(commandsFound)}/${String(commandsTotal)} | ` +
        `${String(found)}/${String(total)} | ${String(row.typed)}/${String(total)} (${percent(row.typed, total)}) |`;
      it(`SPEC §15 introspection quality: ${entry.program}: ≥ ${String(entry.floor * 100)} % of the documented options found with their type ${title}`, async ({
        annotate,
      }) => {
        await annotate(
          `${title} missing: ${row.missing.join(' ') || 'none'}; mistyped: ${row.mistyped.join(' ') || 'none'}` +
            (entry.why === undefined ? '' : `; floor: ${entry.why}`),
        );
        expect(row.typed / total).toBeGreaterThanOrEqual(entry.floor);
        if (commandsTotal > 0) {
          expect(commandsFound / commandsTotal).toBeGreaterThanOrEqual(entry.subcommandFloor ?? 1);
        }
      });
    }
  });
}
