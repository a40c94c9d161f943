// SPEC §15 introspection, measured live: the built `ahma-introspect` on the programs installed here
// (a fresh machine's missing ones fetched from Debian into a private prefix by scripts/live.sh),
// each written file validated as the server checks it, then measured against the hand-written
// expected lists of test/fixtures/expected with the floors of the recorded-help tests
// (test/support/quality-cases.ts). A program that is not installed is skipped and said; at least
// twelve must be measured. Prints the table docs/introspection.md shows ("Measured live").
//
//   pnpm --filter @ahma/introspect run test:live     (not part of `pnpm test`)
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DocumentChecker } from '@ahma/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fromTool,
  measure,
  percent,
  readExpected,
  type Expected,
  type QualityRow,
} from '../support/measure.js';
import { QUALITY_CASES } from '../support/quality-cases.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/ahma-introspect.js', import.meta.url));
/**
 * Where scripts/live.sh put the programs it fetched: the sandbox reads nothing under /var/tmp, so
 * the help commands are let read it (--allow-read), programs and libraries alike.
 */
const PREFIX = process.env['AHMA_LIVE_PREFIX'];

/** One measured row: the expected list and where in the tool file it is measured. */
interface Measured {
  /** The row's case in QUALITY_CASES (its floor), e.g. `git commit`. */
  readonly case: string;
  /** test/fixtures/expected/<expected>.json */
  readonly expected: string;
  /** The subcommand path in the tool file; [] = the program's own level. */
  readonly at: readonly string[];
}

interface LiveProgram {
  /** What `ahma-introspect` is given, and the program looked for on PATH. */
  readonly name: string;
  /** The help family its parser reads. */
  readonly family: string;
  /**
   * Its expected list documents Debian 12's version: scripts/live.sh fetches it where it is
   * missing. The others' lists document newer versions than Debian's.
   */
  readonly debian: boolean;
  readonly version: readonly string[];
  readonly depth: number;
  readonly rows: readonly Measured[];
}

const root = (name: string, expected = name): Measured => ({ case: name, expected, at: [] });

/** A program of the GNU family: its own help, its own options. */
const gnu = (name: string): LiveProgram => ({
  name,
  debian: true,
  family: 'GNU',
  version: [name, '--version'],
  depth: 0,
  rows: [root(name)],
});

const PROGRAMS: readonly LiveProgram[] = [
  gnu('grep'),
  gnu('sed'),
  gnu('tar'),
  gnu('find'),
  gnu('curl'),
  gnu('rsync'),
  gnu('jq'),
  {
    name: 'git',
    debian: true,
    family: 'git',
    version: ['git', '--version'],
    depth: 1,
    rows: [root('git'), { case: 'git commit', expected: 'git-commit', at: ['commit'] }],
  },
  {
    name: 'cargo',
    debian: false,
    family: 'clap',
    version: ['cargo', '--version'],
    depth: 1,
    rows: [{ case: 'cargo build', expected: 'cargo', at: ['build'] }],
  },
  {
    name: 'rg',
    debian: true,
    family: 'clap',
    version: ['rg', '--version'],
    depth: 0,
    rows: [root('rg')],
  },
  {
    name: 'docker',
    debian: false,
    family: 'cobra',
    version: ['docker', '--version'],
    depth: 1,
    rows: [root('docker'), { case: 'docker run', expected: 'docker-run', at: ['run'] }],
  },
  {
    name: 'kubectl',
    debian: false,
    family: 'cobra',
    version: ['kubectl', 'version', '--client'],
    depth: 1,
    rows: [{ case: 'kubectl get', expected: 'kubectl-get', at: ['get'] }],
  },
  {
    name: 'gh',
    debian: true,
    family: 'cobra',
    version: ['gh', '--version'],
    depth: 2,
    rows: [{ case: 'gh pr create', expected: 'gh-pr-create', at: ['pr', 'create'] }],
  },
  {
    // `python3 -m pip`, through a two-line program (ahma-introspect takes one program).
    name: 'pip',
    debian: false,
    family: 'argparse',
    version: ['python3', '-m', 'pip', '--version'],
    depth: 1,
    rows: [{ case: 'pip install', expected: 'pip-install', at: ['install'] }],
  },
  {
    name: 'npm',
    debian: false,
    family: 'npm',
    version: ['npm', '--version'],
    depth: 1,
    rows: [{ case: 'npm install', expected: 'npm-install', at: ['install'] }],
  },
];

/** The executable `name` on PATH, if any. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (!dir.startsWith('/')) continue;
    const path = join(dir, name);
    try {
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      continue;
    }
  }
  return undefined;
}

/** `--help` and `--version` are left out of every tool file on purpose: not counted here. */
function withoutHelp(expected: Expected): Expected {
  const help = (long?: string, short?: string) =>
    long === 'help' ||
    long === 'version' ||
    (long === undefined && ['h', 'V'].includes(short ?? ''));
  return { ...expected, options: expected.options.filter((o) => !help(o.long, o.short)) };
}

type Json = Record<string, unknown>;

/** The floors a row is held to, as the table says them. */
function floorOf(
  options: number,
  subcommands: number | undefined,
  optionsCounted: boolean,
  subcommandsCounted: boolean,
): string {
  return [
    ...(optionsCounted ? [`${String(Math.round(options * 100))} %`] : []),
    ...(subcommandsCounted
      ? [`${String(Math.round((subcommands ?? 1) * 100))} % of subcommands`]
      : []),
  ].join(', ');
}

function nodeAt(definition: Json, path: readonly string[]): Json | undefined {
  let node: Json | undefined = definition;
  for (const name of path) {
    node = (node?.['subcommand'] as Json[] | undefined)?.find((each) => each['name'] === name);
  }
  return node;
}

interface TableRow {
  readonly order: number;
  readonly cells: readonly string[];
}

const table: TableRow[] = [];
let measuredPrograms = 0;
let work = '';

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'ahma-introspect-live-'));
  // `python3 -m pip` as one program: its help is pip's own, run by the Python on PATH. A pip that
  // live.sh fetched is found through PYTHONPATH, written in here: the sandbox passes no such
  // variable to the help command.
  const pythonPath = process.env['PYTHONPATH'];
  const path = pythonPath === undefined ? '' : `PYTHONPATH='${pythonPath.replaceAll("'", '')}' `;
  await writeFile(join(work, 'pip'), `#!/bin/sh\n${path}exec python3 -m pip "$@"\n`);
  await chmod(join(work, 'pip'), 0o755);
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
  const header = [
    '| program (version) | family | subcommands | options found | right type | floor | time |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  const lines = [...table]
    .sort((a, b) => a.order - b.order)
    .map((row) => `| ${row.cells.join(' | ')} |`);
  process.stdout.write(
    `\nSPEC §15 introspection, measured live (${String(measuredPrograms)} programs):\n\n` +
      `${[...header, ...lines].join('\n')}\n\n`,
  );
});

/** Why `program` cannot be measured here, if it cannot. */
function missing(program: LiveProgram): string | undefined {
  if (program.name === 'pip') {
    return onPath('python3') === undefined ? 'python3 is not installed' : undefined;
  }
  if (onPath(program.name) !== undefined) return undefined;
  return program.debian
    ? `${program.name} is not installed`
    : `${program.name} is not installed (Debian's is older than the version its list documents: not fetched)`;
}

async function versionOf(program: LiveProgram): Promise<string> {
  const [file = '', ...args] = program.version;
  const { stdout, stderr } = await run(file, args, { timeout: 20_000 }).catch(
    (error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
  const line = `${stdout}${stderr}`.split('\n').find((each) => each.trim() !== '') ?? '?';
  return (/\d+\.\d+(\.\d+)?/.exec(line) ?? [line.trim()])[0];
}

describe.concurrent(
  'SPEC §15 introspection, live: ahma-introspect on the installed programs',
  () => {
    PROGRAMS.forEach((program, order) => {
      const why = missing(program);
      const title = `SPEC §15 introspection, live: ${program.name} (depth ${String(program.depth)}): the file validates and each row meets its floor`;
      if (why !== undefined) {
        table.push({
          order,
          cells: [program.name, program.family, `skipped: ${why}`, '', '', '', ''],
        });
        it.skip(`${title} (skipped: ${why})`, () => undefined);
        return;
      }
      it(title, async ({ annotate }) => {
        const pip = program.name === 'pip';
        if (pip) {
          const check = await run('python3', ['-m', 'pip', '--version']).catch(() => undefined);
          if (check === undefined) {
            table.push({
              order,
              cells: ['pip', program.family, 'skipped: python3 has no pip', '', '', '', ''],
            });
            return;
          }
        }
        const version = await versionOf(program);
        const out = join(work, `${program.name}.json`);
        const started = performance.now();
        const args = [
          BIN,
          pip ? join(work, 'pip') : program.name,
          '--depth',
          String(program.depth),
          '--out',
          out,
          ...(PREFIX === undefined ? [] : ['--allow-read', PREFIX]),
        ];
        const result = await run(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }).catch(
          (error: { code?: number; stderr?: string }) => {
            throw new Error(
              `ahma-introspect ${program.name} exited ${String(error.code)}:\n${error.stderr ?? ''}`,
            );
          },
        );
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        const notes = result.stderr.split('\n').filter((line) => line.startsWith('note: ')).length;
        const text = await readFile(out, 'utf8');
        // The file validates exactly as the server and ahma-validate check it.
        const check = new DocumentChecker({ compileInputSchemas: true }).checkDefinition(out, text);
        expect(check.ok, check.ok ? '' : JSON.stringify(check.diagnostics.slice(0, 3))).toBe(true);
        const definition = JSON.parse(text) as Json;
        measuredPrograms++;

        const failures: string[] = [];
        program.rows.forEach((row, index) => {
          const entry = QUALITY_CASES.get(row.case);
          if (entry === undefined) throw new Error(`no quality case ${row.case}`);
          const expected = withoutHelp(readExpected(row.expected));
          const hasSubcommands = (expected.subcommands ?? []).length > 0;
          // A program with subcommands: its own options are not offered (MTDF passes options after
          // the subcommand), so its row counts subcommands; a program without is one tool, default.
          const node =
            row.at.length === 0 && !hasSubcommands
              ? nodeAt(definition, ['default'])
              : nodeAt(definition, row.at);
          if (node === undefined) {
            failures.push(`${row.case}: no subcommand ${row.at.join(' ')} in the file`);
            return;
          }
          const measured: QualityRow = measure(fromTool(node), expected);
          const [found, total] = measured.options;
          const [commands, commandsTotal] = measured.subcommands;
          const optionsCounted = !hasSubcommands;
          table.push({
            order: order + index / 10,
            cells: [
              `${row.case} (${version})`,
              program.family,
              commandsTotal === 0 ? '–' : `${String(commands)}/${String(commandsTotal)}`,
              optionsCounted ? `${String(found)}/${String(total)}` : 'not offered',
              optionsCounted
                ? `${String(measured.typed)} (${percent(measured.typed, total)})`
                : '–',
              floorOf(entry.floor, entry.subcommandFloor, optionsCounted, commandsTotal > 0),
              index === 0 ? `${seconds} s, ${String(notes)} notes` : '',
            ],
          });
          void annotate(
            `${row.case}: missing ${measured.missing.join(' ') || 'none'}; mistyped ${measured.mistyped.join(' ') || 'none'}`,
          );
          if (optionsCounted && total > 0 && measured.typed / total < entry.floor) {
            failures.push(
              `${row.case}: ${percent(measured.typed, total)} of the options with their type, below ${String(entry.floor * 100)} % (missing ${measured.missing.join(' ')}; mistyped ${measured.mistyped.join(' ')})`,
            );
          }
          if (commandsTotal > 0 && commands / commandsTotal < (entry.subcommandFloor ?? 1)) {
            failures.push(
              `${row.case}: ${String(commands)} of ${String(commandsTotal)} subcommands, below the floor`,
            );
          }
        });
        expect(failures).toEqual([]);
      });
    });
  },
);

describe('SPEC §15 introspection, live: enough programs', () => {
  it('SPEC §15 introspection, live: at least twelve programs were measured', () => {
    expect(measuredPrograms).toBeGreaterThanOrEqual(12);
  });
});
