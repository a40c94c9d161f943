// SPEC §15 introspection quality: the programs measured, each with the floor its row is held to
// (docs/introspection.md, "Measured quality"). The recorded-help tests (test/unit/parse/quality*)
// measure each case's fixture; the live run (test/live/) measures the same programs installed,
// through the built ahma-introspect, against the same expected lists and floors.
import type { HelpParser } from '../../src/parse/model.js';
import { argparseParser } from '../../src/parse/parsers/argparse.js';
import { clapParser } from '../../src/parse/parsers/clap.js';
import { cobraParser } from '../../src/parse/parsers/cobra.js';
import { commanderParser } from '../../src/parse/parsers/commander.js';
import { gitParser } from '../../src/parse/parsers/git.js';
import { gnuParser } from '../../src/parse/parsers/gnu.js';
import { npmParser } from '../../src/parse/parsers/npm.js';

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

/** The GNU, git and clap families. */
export const GNU_GIT_CLAP_CASES: readonly QualityCase[] = [
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
    subcommandFloor: 0.5,
    why: "git --help's usage spells 17 of the manual's 23 global options (no --*-pathspecs, --no-optional-locks, --list-cmds), and lists the 22 common commands of the manual's 42 porcelain ones",
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

/** The cobra, argparse, npm and commander families. */
export const COBRA_ARGPARSE_NPM_COMMANDER_CASES: readonly QualityCase[] = [
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

/** Every case, by its program (`git commit`, `pip install`). */
export const QUALITY_CASES: ReadonlyMap<string, QualityCase> = new Map(
  [...GNU_GIT_CLAP_CASES, ...COBRA_ARGPARSE_NPM_COMMANDER_CASES].map((entry) => [
    entry.program,
    entry,
  ]),
);
