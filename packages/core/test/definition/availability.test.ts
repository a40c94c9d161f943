// SPEC §2 availability_check: probes run at startup, confined by the real sandbox (R7.2),
// concurrently, bounded in time, each distinct command line once; a failing tool-level probe hides
// every tool of its file, a subcommand-level one only that subcommand's leaves.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  availableTools,
  checkAvailability,
  formatAvailability,
  type AvailabilityOptions,
  type AvailabilityResult,
} from '../../src/definition/availability.js';
import type { CheckedDefinition } from '../../src/definition/definition-set.js';
import { loadTools } from '../../src/definition/load.js';
import { engineFixture, removeAll, varTmpDir, type EngineFixture } from '../support/engine.js';
import { newMarker, pidsWithMarker, quote } from '../support/sandbox-helper.js';
import { checkDocuments } from './helpers.js';

let scope: string;
let stateDir: string;
/** An engine without the shell pool: its executor runs the probes. */
let fixture: EngineFixture;
let counter = 0;

beforeAll(async () => {
  fixture = await engineFixture();
  scope = fixture.scope;
  stateDir = await varTmpDir('avail-state');
});
afterAll(async () => {
  await fixture.dispose();
  await removeAll([stateDir]);
});

/** A fresh file in the scope that probes append to, to count their runs. */
function logFile(): string {
  return join(scope, `runs-${String(++counter)}.log`);
}

async function lines(file: string): Promise<string[]> {
  if (!existsSync(file)) return [];
  return (await readFile(file, 'utf8')).split('\n').filter((line) => line !== '');
}

/** A check running `sh -c SCRIPT`. */
const sh = (script: string, extra: Record<string, unknown> = {}) => ({
  command: 'sh',
  args: ['-c', script],
  ...extra,
});

/** Valid definitions from in-memory documents, checked as the loader checks them. */
function definitions(documents: Record<string, unknown>): readonly CheckedDefinition[] {
  const { accepted, diagnostics } = checkDocuments(documents);
  expect(diagnostics).toEqual([]);
  return accepted;
}

/**
 * A definition `name` with leaves `a` and `b` and the given tool-level keys; its program, `true`,
 * exists (a tool whose program is missing is not offered, whatever its checks say).
 */
function tool(name: string, keys: Record<string, unknown> = {}, subs?: unknown[]): unknown {
  return {
    name,
    description: `The ${name} tool.`,
    command: 'true',
    synchronous: true,
    ...keys,
    subcommand: subs ?? [
      { name: 'a', description: 'Does a.' },
      { name: 'b', description: 'Does b.' },
    ],
  };
}

function check(
  source: readonly CheckedDefinition[],
  options: Partial<AvailabilityOptions> = {},
): ReturnType<typeof checkAvailability> {
  return checkAvailability(
    { definitions: source },
    { executor: fixture.engine.executor, ...options },
  );
}

function only(results: readonly AvailabilityResult[]): AvailabilityResult {
  expect(results).toHaveLength(1);
  const [result] = results;
  if (result === undefined) throw new Error('unreachable');
  return result;
}

describe('checkAvailability: one probe', () => {
  it('§2 availability: exit 0 (the default success code) means available', async () => {
    const report = await check(
      definitions({ 't.json': tool('t', { availability_check: { command: 'true' } }) }),
    );
    const result = only(report.checks);
    expect(result).toMatchObject({
      file: 't.json',
      definitionName: 't',
      pointer: '',
      label: 't',
      tools: ['t_a', 't_b'],
      argv: ['true'],
      successExitCodes: [0],
      status: 'available',
      available: true,
      exitCode: 0,
      reason: undefined,
    });
    expect(report.failed).toEqual([]);
    expect(report.unavailable).toEqual([]);
    expect(formatAvailability(result)).toBe('t.json#/availability_check: t available');
  });

  it('§2 availability: a code outside success_exit_codes fails, with the first line of output', async () => {
    const report = await check(
      definitions({
        'f.json': tool('f', {
          availability_check: { command: 'false' },
          install_instructions: 'apt install f',
        }),
        'g.json': tool('g', { availability_check: sh('echo "no such command: g" >&2; exit 3') }),
      }),
    );
    const [f, g] = report.checks;
    expect(f).toMatchObject({
      status: 'exit_code',
      available: false,
      exitCode: 1,
      reason: 'exited with 1, expected 0',
      installInstructions: 'apt install f',
    });
    expect(g).toMatchObject({
      status: 'exit_code',
      exitCode: 3,
      output: 'no such command: g',
      reason: 'exited with 3, expected 0: no such command: g',
      installInstructions: undefined,
    });
    expect(report.failed).toEqual([f, g]);
    expect(report.unavailable.map((tool) => tool.name)).toEqual(['f_a', 'f_b', 'g_a', 'g_b']);
    if (f === undefined) throw new Error('unreachable');
    expect(formatAvailability(f)).toBe(
      'f.json#/availability_check: f unavailable: exited with 1, expected 0 (not offered: f_a, f_b)',
    );
  });

  it('§2 availability: success_exit_codes lists the codes that mean available', async () => {
    const report = await check(
      definitions({
        'three.json': tool('three', {
          availability_check: sh('exit 3', { success_exit_codes: [0, 3] }),
        }),
        'other.json': tool('other', {
          availability_check: sh('exit 4', { success_exit_codes: [0, 3] }),
        }),
      }),
    );
    expect(report.checks.map((result) => [result.label, result.status, result.reason])).toEqual([
      ['three', 'available', undefined],
      ['other', 'exit_code', 'exited with 4, expected one of 0, 3'],
    ]);
  });

  it('§2 availability: a command missing from PATH, or a missing path, is "not found" and never runs', async () => {
    const report = await check(
      definitions({
        'm.json': tool('m', {
          availability_check: { command: 'ahma-no-such-command --version' },
          install_instructions: 'cargo install m\nthen restart',
        }),
        'p.json': tool('p', { availability_check: { command: '/nonexistent/bin/p' } }),
        'd.json': tool('d', { availability_check: { command: scope } }),
      }),
    );
    expect(report.checks.map((result) => [result.label, result.status, result.reason])).toEqual([
      ['m', 'not_found', '"ahma-no-such-command" not found on PATH'],
      ['p', 'not_found', '"/nonexistent/bin/p" does not exist or is not executable'],
      ['d', 'not_found', `"${scope}" does not exist or is not executable`],
    ]);
    expect(report.checks[0]).toMatchObject({
      argv: ['ahma-no-such-command', '--version'],
      exitCode: null,
      installInstructions: 'cargo install m\nthen restart',
    });
  });

  it('§2 availability: a probe running past the timeout fails and its process tree is stopped', async () => {
    const marker = newMarker('ahma-avail');
    const started = performance.now();
    const report = await check(
      definitions({
        'slow.json': tool('slow', {
          // A background grandchild too: the sandbox helper must end the whole tree.
          availability_check: {
            command: 'bash',
            args: ['-c', `(exec -a ${marker}-bg sleep 30) & exec -a ${marker} sleep 30`],
          },
        }),
      }),
      { timeoutMs: 300 },
    );
    const result = only(report.checks);
    expect(result).toMatchObject({
      status: 'timed_out',
      available: false,
      reason: 'timed out after 300 ms',
    });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(pidsWithMarker(marker)).toEqual([]);
    expect(report.unavailable.map((tool) => tool.name)).toEqual(['slow_a', 'slow_b']);
  });

  it('R7.2: probes run confined: a write outside the scope is refused', async () => {
    const outside = await varTmpDir('avail-outside');
    try {
      const target = join(outside, 'written');
      const report = await check(
        definitions({ 'w.json': tool('w', { availability_check: sh(`: > ${quote(target)}`) }) }),
      );
      expect(only(report.checks)).toMatchObject({ status: 'exit_code', available: false });
      expect(existsSync(target)).toBe(false);
    } finally {
      await removeAll([outside]);
    }
  });

  it('§2 availability: probes run in the scope, with no stdin and the non-interactive environment', async () => {
    const out = logFile();
    const report = await check(
      definitions({
        'e.json': tool('e', {
          availability_check: sh(
            `pwd > ${quote(out)}; echo "CI=$CI" >> ${quote(out)}; if read -r line; then echo stdin >> ${quote(out)}; fi`,
          ),
        }),
      }),
    );
    expect(only(report.checks).available).toBe(true);
    expect(await lines(out)).toEqual([scope, 'CI=1']);
  });
});

describe('checkAvailability: which tools a failure removes', () => {
  it('§2 availability: a failing tool-level check removes every tool of the file', async () => {
    const source = definitions({
      'tool.json': tool('tool', {
        availability_check: { command: 'false' },
        install_instructions: 'install tool',
      }),
      'fine.json': tool('fine', { availability_check: { command: 'true' } }),
    });
    const report = await check(source);
    expect(report.unavailable).toEqual([
      expect.objectContaining({ name: 'tool_a', file: 'tool.json', calls: undefined }),
      expect.objectContaining({ name: 'tool_b', file: 'tool.json', calls: undefined }),
    ]);
    expect(report.unavailable[0]?.cause.installInstructions).toBe('install tool');
    const leaves = source.flatMap((entry) => entry.leaves);
    expect(availableTools(leaves, report).map((leaf) => leaf.name)).toEqual(['fine_a', 'fine_b']);
  });

  it('§2 availability: a failing subcommand check removes only that subcommand and what is below it', async () => {
    const subs = [
      { name: 'plain', description: 'No check.' },
      {
        name: 'nextest',
        description: 'Nested leaves.',
        availability_check: { command: 'ahma-no-such-nextest', args: ['--version'] },
        install_instructions: 'cargo install cargo-nextest',
        subcommand: [
          { name: 'run', description: 'Run.' },
          { name: 'list', description: 'List.' },
        ],
      },
      // Sibling pointers share a prefix: /subcommand/1 must not match /subcommand/10.
      ...Array.from({ length: 9 }, (_, index) => ({
        name: `s${String(index + 2)}`,
        description: 'Filler.',
      })),
    ];
    const report = await check(
      definitions({
        'cargo.json': tool(
          'cargo',
          { availability_check: { command: 'true' }, install_instructions: 'rustup' },
          subs,
        ),
      }),
    );
    expect(report.checks.map((result) => [result.label, result.pointer, result.status])).toEqual([
      ['cargo', '', 'available'],
      ['cargo nextest', '/subcommand/1', 'not_found'],
    ]);
    expect(report.failed[0]).toMatchObject({
      tools: ['cargo_nextest_run', 'cargo_nextest_list'],
      installInstructions: 'cargo install cargo-nextest',
    });
    expect(report.unavailable.map((tool) => tool.name)).toEqual([
      'cargo_nextest_run',
      'cargo_nextest_list',
    ]);
    expect(report.failed[0] && formatAvailability(report.failed[0])).toBe(
      'cargo.json#/subcommand/1/availability_check: cargo nextest unavailable: "ahma-no-such-nextest" not found on PATH (not offered: cargo_nextest_run, cargo_nextest_list)',
    );
  });

  it('§2 availability: a subcommand without install_instructions inherits the nearest ones', async () => {
    const report = await check(
      definitions({
        'x.json': tool('x', { install_instructions: 'get x' }, [
          { name: 'a', description: 'A.', availability_check: { command: 'false' } },
          { name: 'b', description: 'B.' },
        ]),
      }),
    );
    expect(only(report.failed)).toMatchObject({
      label: 'x a',
      tools: ['x_a'],
      installInstructions: 'get x',
    });
  });

  it('§2 availability: the outermost failing check is the one a tool is reported under', async () => {
    const report = await check(
      definitions({
        'y.json': tool('y', { availability_check: { command: 'false' } }, [
          { name: 'a', description: 'A.', availability_check: sh('exit 2') },
          { name: 'b', description: 'B.' },
        ]),
      }),
    );
    expect(report.failed.map((result) => result.label)).toEqual(['y', 'y a']);
    expect(report.unavailable.map((tool) => [tool.name, tool.cause.label])).toEqual([
      ['y_a', 'y'],
      ['y_b', 'y'],
    ]);
  });

  it('§2 availability: a check covering only disabled tools is not run', async () => {
    const out = logFile();
    const probe = sh(`echo run >> ${quote(out)}; exit 1`);
    const report = await check(
      definitions({
        'off.json': tool('off', { enabled: false, availability_check: probe }),
        'part.json': tool('part', {}, [
          { name: 'a', description: 'A.', enabled: false, availability_check: probe },
          { name: 'b', description: 'B.' },
        ]),
      }),
    );
    // Only the lookup of part's program (true) remains: no probe covering a disabled tool.
    expect(report.checks.filter((result) => result.kind === 'probe')).toEqual([]);
    expect(report.unavailable).toEqual([]);
    expect(await lines(out)).toEqual([]);
  });

  it('§2 availability: a sequence calling an unavailable tool is not offered either', async () => {
    const report = await check(
      definitions({
        'git.json': tool('git', { availability_check: { command: 'false' } }),
        'ship.json': {
          name: 'ship',
          description: 'Ships.',
          command: 'sequence',
          synchronous: true,
          sequence: [{ tool: 'git', subcommand: 'b' }],
        },
        'release.json': {
          name: 'release',
          description: 'Releases.',
          command: 'sequence',
          synchronous: true,
          sequence: [{ tool: 'ship' }],
        },
        'other.json': {
          name: 'other',
          description: 'Other.',
          command: 'sequence',
          synchronous: true,
          sequence: [{ tool: 'sandboxed_shell', args: { command: 'true' } }],
        },
      }),
    );
    expect(report.unavailable.map((tool) => [tool.name, tool.calls, tool.cause.label])).toEqual([
      ['git_a', undefined, 'git'],
      ['git_b', undefined, 'git'],
      ['ship', 'git_b', 'git'],
      ['release', 'ship', 'git'],
    ]);
  });
});

describe('checkAvailability: running the probes', () => {
  it('§2 availability: an identical command line runs once, each check judging it by its own codes', async () => {
    const out = logFile();
    const probe = `echo run >> ${quote(out)}; exit 3`;
    const report = await check(
      definitions({
        'one.json': tool('one', { availability_check: sh(probe, { success_exit_codes: [3] }) }),
        'two.json': tool('two', { availability_check: sh(probe) }),
        'three.json': tool('three', {}, [
          {
            name: 'a',
            description: 'A.',
            availability_check: sh(probe, { success_exit_codes: [3] }),
          },
        ]),
        // The same argv spelled through `command` with a leading argument.
        'four.json': tool('four', { availability_check: { command: 'sh -c', args: [probe] } }),
      }),
    );
    expect(await lines(out)).toEqual(['run']);
    const probes = report.checks.filter((result) => result.kind === 'probe');
    expect(probes.map((result) => [result.label, result.available])).toEqual([
      ['one', true],
      ['two', false],
      ['three a', true],
      ['four', false],
    ]);
  });

  it('§2 availability: at most `concurrency` probes run at once, and they do run concurrently', async () => {
    const out = logFile();
    const documents = Object.fromEntries(
      Array.from({ length: 6 }, (_, index) => [
        `c${String(index)}.json`,
        tool(`c${String(index)}`, {
          // A distinct argv per definition ($0 differs), so nothing is deduplicated.
          availability_check: {
            command: 'sh',
            args: [
              '-c',
              `echo + >> ${quote(out)}; sleep 0.3; echo - >> ${quote(out)}`,
              `c${String(index)}`,
            ],
          },
        }),
      ]),
    );
    const started = performance.now();
    const report = await check(definitions(documents), { concurrency: 2 });
    const elapsed = performance.now() - started;
    expect(report.failed).toEqual([]);
    const events = await lines(out);
    expect(events).toHaveLength(12);
    let running = 0;
    let peak = 0;
    for (const event of events) {
      running += event === '+' ? 1 : -1;
      peak = Math.max(peak, running);
    }
    expect(peak).toBe(2);
    // Three rounds of 0.3 s, two at a time (a peak of 2 shows they overlapped).
    expect(elapsed).toBeGreaterThanOrEqual(850);
  });

  it('§2 availability: a definition without a check is offered when its program exists: looked up, never run', async () => {
    const runs = logFile();
    const report = await check(
      definitions({
        'n.json': tool('n', { command: 'true' }),
        'gone.json': tool('gone', {
          command: 'ahma-no-such-program',
          install_instructions: 'get it',
        }),
        'script.json': tool('script', { command: `sh -c "echo ran >> ${runs}"` }),
      }),
    );
    expect(report.checks.map((c) => [c.label, c.kind, c.available])).toEqual([
      ['true', 'lookup', true],
      ['ahma-no-such-program', 'lookup', false],
      ['sh', 'lookup', true],
    ]);
    expect(report.unavailable.map((t) => t.name)).toEqual(['gone_a', 'gone_b']);
    expect(report.failed[0]?.installInstructions).toBe('get it');
    expect(formatAvailability(only(report.failed))).toBe(
      'gone.json#/command: ahma-no-such-program unavailable: "ahma-no-such-program" not found on PATH (not offered: gone_a, gone_b)',
    );
    expect(await lines(runs)).toEqual([]);
  });
});

describe('checkAvailability with loadTools', () => {
  it('§2 availability: the server line: check a LoadResult and filter its tools', async () => {
    const dir = join(stateDir, `tools-${String(++counter)}`);
    await mkdir(dir);
    await writeFile(
      join(dir, 'here.json'),
      JSON.stringify(tool('here', { availability_check: { command: 'true' } })),
    );
    await writeFile(
      join(dir, 'gone.json'),
      JSON.stringify(
        tool('gone', { availability_check: { command: 'false' }, install_instructions: 'get it' }),
      ),
    );
    const loaded = await loadTools({ toolsDir: { dir, origin: 'option' } });
    expect(loaded.diagnostics).toEqual([]);
    const report = await checkAvailability(loaded, { executor: fixture.engine.executor });
    expect(availableTools(loaded.tools, report).map((entry) => entry.name)).toEqual([
      'here_a',
      'here_b',
    ]);
    expect(only(report.failed)).toMatchObject({
      file: join(dir, 'gone.json'),
      installInstructions: 'get it',
    });
  });
});
