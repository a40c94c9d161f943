// SPEC §15 introspection quality: the measure the recorded-help tests (test/unit/parse/quality*)
// and the live run on installed programs (test/live/) share. An expected list
// (test/fixtures/expected/*.json) is written from a program's manual or documentation, never from
// a parser's output; a row counts the subcommands found, the options found (by long name, else
// short) and those found with the documented type.
import { readFileSync } from 'node:fs';
import type { HelpModel } from '../../src/parse/model.js';

export type DocumentedType = 'boolean' | 'string' | 'integer' | 'number';

export interface ExpectedOption {
  readonly long?: string;
  readonly short?: string;
  readonly type: DocumentedType;
}

export interface Expected {
  readonly source: string;
  /** Where in the program the options are (`root`, `build`, `pr create`). */
  readonly command: string;
  readonly subcommands?: readonly string[];
  readonly options: readonly ExpectedOption[];
}

/** An option as it was read: from a parser's model, or from a written tool file. */
export interface FoundOption {
  readonly long?: string;
  readonly short?: string;
  readonly type: DocumentedType;
}

export interface Found {
  readonly subcommands: readonly string[];
  readonly options: readonly FoundOption[];
}

export interface QualityRow {
  readonly subcommands: readonly [number, number];
  readonly options: readonly [number, number];
  readonly typed: number;
  readonly missing: readonly string[];
  readonly mistyped: readonly string[];
}

/** A file of test/fixtures. */
export function readFixture(path: string): string {
  return readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8');
}

/** test/fixtures/expected/<name>.json */
export function readExpected(name: string): Expected {
  return JSON.parse(readFixture(`expected/${name}.json`)) as Expected;
}

/** What a parser read. */
export function fromModel(model: HelpModel): Found {
  return {
    subcommands: model.subcommands.map((command) => command.name),
    options: model.options.map((option) => ({
      ...(option.long === undefined ? {} : { long: option.long }),
      ...(option.short === undefined ? {} : { short: option.short }),
      type: option.value === undefined ? 'boolean' : option.value.type,
    })),
  };
}

type Json = Record<string, unknown>;

/**
 * What a written tool file offers at one of its subcommands (mtdf/write.ts): an option's `name` is
 * its long name, `-x` for a short one alone, `-name` for a one-dash long one (find's); `alias` is
 * its short name; a repeatable option is an array of its value's type.
 */
export function fromTool(node: Json): Found {
  const options = (node['options'] as Json[] | undefined) ?? [];
  return {
    subcommands: ((node['subcommand'] as Json[] | undefined) ?? []).map((sub) =>
      String(sub['name']),
    ),
    options: options.map((option) => {
      const name = String(option['name']);
      const items = option['items'] as Json | undefined;
      const type = String(option['type'] === 'array' ? items?.['type'] : option['type']);
      const alias = option['alias'] as string | undefined;
      const named = /^-[^-]$/.test(name)
        ? { short: name.slice(1) }
        : { long: name.replace(/^-/, ''), ...(alias === undefined ? {} : { short: alias }) };
      return { ...named, type: type as DocumentedType };
    }),
  };
}

/**
 * The found option for a documented one: by long name, else by short. A documented boolean `X`
 * whose help spells only its negation (npm's `audit`, shown as `--no-audit`) is found as `no-X`.
 */
function find(options: readonly FoundOption[], wanted: ExpectedOption): FoundOption | undefined {
  if (wanted.long !== undefined) {
    const exact = options.find((option) => option.long === wanted.long);
    if (exact !== undefined) return exact;
    if (wanted.type === 'boolean') {
      const negated = options.find((option) => option.long === `no-${wanted.long ?? ''}`);
      if (negated !== undefined) return negated;
    }
  }
  if (wanted.short === undefined) return undefined;
  // A short name alone counts when the help gives no long name for it.
  return options.find(
    (option) =>
      option.short === wanted.short && (wanted.long === undefined || option.long === undefined),
  );
}

export function measure(found: Found, expected: Expected): QualityRow {
  const names = new Set(found.subcommands);
  const wantedCommands = expected.subcommands ?? [];
  const missing: string[] = [];
  const mistyped: string[] = [];
  let count = 0;
  let typed = 0;
  for (const wanted of expected.options) {
    const option = find(found.options, wanted);
    const label = wanted.long === undefined ? `-${wanted.short ?? ''}` : `--${wanted.long}`;
    if (option === undefined) {
      missing.push(label);
      continue;
    }
    count++;
    if (option.type === wanted.type) typed++;
    else mistyped.push(`${label} (${option.type}, documented: ${wanted.type})`);
  }
  return {
    subcommands: [wantedCommands.filter((name) => names.has(name)).length, wantedCommands.length],
    options: [count, expected.options.length],
    typed,
    missing,
    mistyped,
  };
}

export function percent(part: number, whole: number): string {
  return whole === 0 ? '-' : `${String(Math.round((100 * part) / whole))} %`;
}
