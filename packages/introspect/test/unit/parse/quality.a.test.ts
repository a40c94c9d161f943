// SPEC §15 introspection quality: how much of each program's manual its help parser finds. The expected lists
// (test/fixtures/expected/*.json) were written from the manual pages, not from parser output; each
// row counts subcommands found, options found (by long or short name) and options found with the
// type the manual gives. The measured row is annotated on the test and asserted against a floor.
import { clapParser } from '../../../src/parse/parsers/clap.js';
import { gitParser } from '../../../src/parse/parsers/git.js';
import { gnuParser } from '../../../src/parse/parsers/gnu.js';
import { qualityTests, type QualityCase } from './quality.js';

const CASES: readonly QualityCase[] = [
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

qualityTests('GNU, git, clap families', CASES);
