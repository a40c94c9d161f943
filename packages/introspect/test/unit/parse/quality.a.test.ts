// SPEC §15 introspection quality: how much of each program's manual its help parser finds. The expected lists
// (test/fixtures/expected/*.json) were written from the manual pages, not from parser output; each
// row counts subcommands found, options found (by long or short name) and options found with the
// type the manual gives. The measured row is annotated on the test and asserted against a floor.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HelpModel, HelpOption, HelpParser } from '../../../src/parse/model.js';
import { clapParser } from '../../../src/parse/parsers/clap.js';
import { gitParser } from '../../../src/parse/parsers/git.js';
import { gnuParser } from '../../../src/parse/parsers/gnu.js';

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

interface Case {
  readonly program: string;
  readonly expected: string;
  readonly fixture: string;
  readonly parser: HelpParser;
  /** The share of the manual's options found with the right type that is asserted. */
  readonly floor: number;
  /** Why the floor is below 90 %, when it is. */
  readonly why?: string;
}

const CASES: readonly Case[] = [
  { program: 'grep', expected: 'grep', fixture: 'grep/3.8/root', parser: gnuParser, floor: 0.9 },
  { program: 'sed', expected: 'sed', fixture: 'sed/4.9/root', parser: gnuParser, floor: 0.9 },
  { program: 'tar', expected: 'tar', fixture: 'tar/1.34/root', parser: gnuParser, floor: 0.9 },
  { program: 'find', expected: 'find', fixture: 'find/4.9.0/root', parser: gnuParser, floor: 0.9 },
  { program: 'curl', expected: 'curl', fixture: 'curl/7.88.1/root', parser: gnuParser, floor: 0.9 },
  {
    program: 'rsync',
    expected: 'rsync',
    fixture: 'rsync/3.5.0/root',
    parser: gnuParser,
    floor: 0.9,
  },
  {
    program: 'jq',
    expected: 'jq',
    fixture: 'jq/1.6/root',
    parser: gnuParser,
    floor: 0.55,
    why: "jq 1.6's --help lists 16 of the manual's 27 options (`Some of the options include:`)",
  },
  {
    program: 'git',
    expected: 'git',
    fixture: 'git/2.39.5/root',
    parser: gitParser,
    floor: 0.7,
    why: "git --help's usage spells 17 of the manual's 23 global options (no --*-pathspecs, --no-optional-locks, --list-cmds)",
  },
  {
    program: 'git commit',
    expected: 'git-commit',
    fixture: 'git/2.39.5/commit',
    parser: gitParser,
    floor: 0.9,
  },
  {
    program: 'cargo build',
    expected: 'cargo',
    fixture: 'cargo/1.95.0/build',
    parser: clapParser,
    floor: 0.9,
  },
  { program: 'rg', expected: 'rg', fixture: 'rg/13.0.0/root', parser: clapParser, floor: 0.9 },
];

function read(path: string): string {
  return readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
}

function typeOf(option: HelpOption): ExpectedOption['type'] {
  return option.value === undefined ? 'boolean' : option.value.type;
}

function find(model: HelpModel, wanted: ExpectedOption): HelpOption | undefined {
  return model.options.find(
    (option) =>
      (wanted.long !== undefined && option.long === wanted.long) ||
      (wanted.long === undefined && wanted.short !== undefined && option.short === wanted.short) ||
      (wanted.short !== undefined && option.short === wanted.short && option.long === undefined),
  );
}

export interface QualityRow {
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
    else mistyped.push(`${label} (${typeOf(option)}, manual: ${wanted.type})`);
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

describe('SPEC §15 introspection quality: measured parser quality against the manuals (GNU, git, clap families)', () => {
  for (const entry of CASES) {
    const expected = JSON.parse(read(`expected/${entry.expected}.json`)) as Expected;
    const row = measure(
      entry.parser.parse(read(`help/${entry.fixture}.txt`), entry.program),
      expected,
    );
    const [found, total] = row.options;
    const [commandsFound, commandsTotal] = row.subcommands;
    const title =
      `| ${entry.program} | ${String(commandsFound)}/${String(commandsTotal)} | ` +
      `${String(found)}/${String(total)} | ${String(row.typed)}/${String(total)} (${percent(row.typed, total)}) |`;
    it(`SPEC §15 introspection quality: ${entry.program}: ≥ ${String(entry.floor * 100)} % of the manual's options found with their type ${title}`, async ({
      annotate,
    }) => {
      await annotate(
        `${title} missing: ${row.missing.join(' ') || 'none'}; mistyped: ${row.mistyped.join(' ') || 'none'}` +
          (entry.why === undefined ? '' : `; floor: ${entry.why}`),
      );
      expect(row.typed / total).toBeGreaterThanOrEqual(entry.floor);
    });
  }
});
