// SPEC §15 introspection quality: how much of each program's documented interface its help parser finds (cobra, argparse,
// npm and commander families). The expected lists (test/fixtures/expected/*.json) were written
// from each program's reference documentation or its own option definitions, never from parser
// output — each file's `source` says which. A row counts subcommands found, options found (by
// long name, else short) and options found with the documented type; the row is annotated on
// the test, put in its name, and asserted against a floor.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parserFor } from '../../../src/parse/index.js';
import type { HelpModel, HelpOption, HelpParser } from '../../../src/parse/model.js';
import { argparseParser } from '../../../src/parse/parsers/argparse.js';
import { cobraParser } from '../../../src/parse/parsers/cobra.js';
import { commanderParser } from '../../../src/parse/parsers/commander.js';
import { npmParser } from '../../../src/parse/parsers/npm.js';

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
  readonly floor: number;
}

const CASES: readonly Case[] = [
  {
    program: 'docker',
    expected: 'docker',
    fixture: 'docker/28.2.2/root',
    parser: cobraParser,
    floor: 0.9,
  },
  {
    program: 'docker run',
    expected: 'docker-run',
    fixture: 'docker/28.2.2/run',
    parser: cobraParser,
    floor: 0.9,
  },
  {
    program: 'kubectl get',
    expected: 'kubectl-get',
    fixture: 'kubectl/1.32.4/get',
    parser: cobraParser,
    floor: 0.9,
  },
  {
    program: 'gh pr create',
    expected: 'gh-pr-create',
    fixture: 'gh/2.23.0/pr-create',
    parser: cobraParser,
    floor: 0.9,
  },
  {
    program: 'pip install',
    expected: 'pip-install',
    fixture: 'pip/23.2.1/install',
    parser: argparseParser,
    floor: 0.9,
  },
  {
    program: 'python3 -m venv',
    expected: 'venv',
    fixture: 'venv/3.11.7/root',
    parser: argparseParser,
    floor: 0.9,
  },
  {
    program: 'python3 -m http.server',
    expected: 'http.server',
    fixture: 'http.server/3.11.7/root',
    parser: argparseParser,
    floor: 0.9,
  },
  {
    program: 'npm install',
    expected: 'npm-install',
    fixture: 'npm/11.19.1/install',
    parser: npmParser,
    floor: 0.9,
  },
  {
    program: 'sucrase (commander)',
    expected: 'sucrase',
    fixture: 'sucrase/3.35.1/root',
    parser: commanderParser,
    floor: 0.9,
  },
  {
    program: 'commander-demo',
    expected: 'commander-demo',
    fixture: 'commander-demo/4.1.1/root',
    parser: commanderParser,
    floor: 0.9,
  },
  {
    program: 'yargs-demo',
    expected: 'yargs-demo',
    fixture: 'yargs-demo/17.7.3/root',
    parser: commanderParser,
    floor: 0.9,
  },
];

function read(path: string): string {
  return readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8');
}

function typeOf(option: HelpOption): ExpectedOption['type'] {
  return option.value === undefined ? 'boolean' : option.value.type;
}

/**
 * The parsed option for a documented one: by long name, else by short. npm's manual documents a
 * boolean config `audit` (default true) whose usage line spells only its negation `--no-audit`:
 * both are the one option, so a documented boolean `X` is also found as `no-X`.
 */
function find(model: HelpModel, wanted: ExpectedOption): HelpOption | undefined {
  if (wanted.long !== undefined) {
    const exact = model.options.find((option) => option.long === wanted.long);
    if (exact !== undefined || wanted.type !== 'boolean') return exact;
    return model.options.find((option) => option.long === `no-${wanted.long ?? ''}`);
  }
  return model.options.find((option) => option.short === wanted.short);
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

describe('SPEC §15 introspection quality: measured parser quality against the documentation (cobra, argparse, npm, commander families)', () => {
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
    it(`SPEC §15 introspection quality: ${entry.program}: ≥ ${String(entry.floor * 100)} % of the documented options found with their type ${title}`, async ({
      annotate,
    }) => {
      await annotate(
        `${title} missing: ${row.missing.join(' ') || 'none'}; mistyped: ${row.mistyped.join(' ') || 'none'}`,
      );
      expect(row.typed / total).toBeGreaterThanOrEqual(entry.floor);
      expect(commandsFound).toBe(commandsTotal);
    });
  }
});

describe('SPEC §15 introspection: each recorded help of these families is read by its own parser', () => {
  const FIXTURES: readonly (readonly [string, string, string])[] = [
    ['docker/28.2.2/root', 'docker', 'cobra'],
    ['docker/28.2.2/run', 'docker', 'cobra'],
    ['docker/28.2.2/container', 'docker', 'cobra'],
    ['docker/28.2.2/image-ls', 'docker', 'cobra'],
    ['kubectl/1.32.4/root', 'kubectl', 'cobra'],
    ['kubectl/1.32.4/get', 'kubectl', 'cobra'],
    ['kubectl/1.32.4/logs', 'kubectl', 'cobra'],
    ['kubectl/1.32.4/config', 'kubectl', 'cobra'],
    ['gh/2.23.0/root', 'gh', 'cobra'],
    ['gh/2.23.0/pr', 'gh', 'cobra'],
    ['gh/2.23.0/pr-create', 'gh', 'cobra'],
    ['gh/2.23.0/repo-clone', 'gh', 'cobra'],
    ['pip/23.2.1/root', 'pip', 'argparse'],
    ['pip/23.2.1/install', 'pip', 'argparse'],
    ['pip/23.2.1/list', 'pip', 'argparse'],
    ['venv/3.11.7/root', 'python3', 'argparse'],
    ['http.server/3.11.7/root', 'python3', 'argparse'],
    ['json.tool/3.11.7/root', 'python3', 'argparse'],
    ['npm/11.19.1/root', 'npm', 'npm'],
    ['npm/11.19.1/install', 'npm', 'npm'],
    ['npm/11.19.1/run', 'npm', 'npm'],
    ['npm/11.19.1/ls', 'npm', 'npm'],
    ['sucrase/3.35.1/root', 'sucrase', 'commander'],
    ['commander-demo/4.1.1/root', 'commander-demo', 'commander'],
    ['commander-demo/4.1.1/deploy', 'commander-demo', 'commander'],
    ['yargs-demo/17.7.3/root', 'yargs-demo', 'commander'],
    ['yargs-demo/17.7.3/serve', 'yargs-demo', 'commander'],
    ['yargs-demo/17.7.3/build', 'yargs-demo', 'commander'],
  ];
  for (const [fixture, program, style] of FIXTURES) {
    it(`SPEC §15 introspection: ${fixture} is read as ${style}`, () => {
      expect(parserFor(read(`help/${fixture}.txt`), program).style).toBe(style);
    });
  }
});
