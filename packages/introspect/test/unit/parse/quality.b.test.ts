// SPEC §15 introspection quality: how much of each program's documented interface its help parser finds (cobra, argparse,
// npm and commander families). The expected lists (test/fixtures/expected/*.json) were written
// from each program's reference documentation or its own option definitions, never from parser
// output — each file's `source` says which. A row counts subcommands found, options found (by
// long name, else short) and options found with the documented type; the row is annotated on
// the test, put in its name, and asserted against a floor.

import { parserFor } from '../../../src/parse/index.js';
import { COBRA_ARGPARSE_NPM_COMMANDER_CASES } from '../../support/quality-cases.js';
import { qualityTests, readFixture } from './quality.js';
import { describe, expect, it } from 'vitest';

qualityTests('cobra, argparse, npm, commander families', COBRA_ARGPARSE_NPM_COMMANDER_CASES);

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
      expect(parserFor(readFixture(`help/${fixture}.txt`), program).style).toBe(style);
    });
  }
});
