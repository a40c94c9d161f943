// SPEC §15 introspection quality: the measure both quality files use. An expected list
// (test/fixtures/expected/*.json) is written from a program's manual or documentation, never from
// a parser's output; a row counts the subcommands found, the options found (by long name, else
// short) and those found with the documented type, and is asserted against a floor.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption, HelpParser } from '../../../src/parse/model.js';

interface ExpectedOption {
  readonly long?: string;
  readonly short?: string;
  readonly type: 'boolean' | 'string' | 'integer' | 'number';
}

interface Expected {
  readonly source: string;
  readonly command: string;
  readonly subcommands?: readonly string[];
  readonly options: readonly ExpectedOption[];
}

export interface QualityCase {
  readonly program: string;
  /** test/fixtures/expected/<expected>.json */
  readonly expected: string;
  /** test/fixtures/help/<fixture>.txt */
  readonly fixture: string;
  readonly parser: HelpParser;
  /** The share of the documented options found with the right type that is asserted. */
  readonly floor: number;
  /** The share of the documented subcommands that must be found (default all). */
  readonly subcommandFloor?: number;
  /** Why a floor is below 90 % (or a subcommand floor below all), when it is. */
  readonly why?: string;
}

export function readFixture(path: string): string {
  return readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
}

function typeOf(option: HelpOption): ExpectedOption['type'] {
  return option.value === undefined ? 'boolean' : option.value.type;
}

/**
 * The parsed option for a documented one: by long name, else by short. A documented boolean `X`
 * whose help spells only its negation (npm's `audit`, shown as `--no-audit`) is found as `no-X`.
 */
function find(model: HelpModel, wanted: ExpectedOption): HelpOption | undefined {
  if (wanted.long !== undefined) {
    const exact = model.options.find((option) => option.long === wanted.long);
    if (exact !== undefined) return exact;
    if (wanted.type === 'boolean') {
      const negated = model.options.find((option) => option.long === `no-${wanted.long ?? ''}`);
      if (negated !== undefined) return negated;
    }
  }
  if (wanted.short === undefined) return undefined;
  // A short name alone counts when the help gives no long name for it.
  return model.options.find(
    (option) =>
      option.short === wanted.short && (wanted.long === undefined || option.long === undefined),
  );
}

interface QualityRow {
  readonly subcommands: readonly [number, number];
  readonly options: readonly [number, number];
  readonly typed: number;
  readonly missing: readonly string[];
  readonly mistyped: readonly string[];
}

function measure(model: HelpModel, expected: Expected): QualityRow {
  const names = new Set(model.subcommands.map((command) => command.name));
  const wantedCommands = expected.subcommands ?? [];
  const missing: string[] = [];
  const mistyped: string[] = [];
  let found = 0;
  let typed = 0;
  for (const wanted of expected.options) {
    const option = find(model, wanted);
    const label = wanted.long === undefined ? `-${wanted.short ?? ''}` : `--${wanted.long}`;
    if (option === undefined) {
      missing.push(label);
      continue;
    }
    found++;
    if (typeOf(option) === wanted.type) typed++;
    else mistyped.push(`${label} (${typeOf(option)}, documented: ${wanted.type})`);
  }
  return {
    subcommands: [wantedCommands.filter((name) => names.has(name)).length, wantedCommands.length],
    options: [found, expected.options.length],
    typed,
    missing,
    mistyped,
  };
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '-' : `${String(Math.round((100 * part) / whole))} %`;
}

/** One test per case, named with its table row and annotated with what it missed. */
export function qualityTests(families: string, cases: readonly QualityCase[]): void {
  describe(`SPEC §15 introspection quality: measured against the documentation (${families})`, () => {
    for (const entry of cases) {
      const expected = JSON.parse(readFixture(`expected/${entry.expected}.json`)) as Expected;
      const row = measure(
        entry.parser.parse(readFixture(`help/${entry.fixture}.txt`), entry.program),
        expected,
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
