// SPEC §2 naming, R2.6 inheritance and R2.4 guidance in descriptions: what one definition becomes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeLeaf,
  flattenDefinition,
  splitCommand,
  type ToolLeaf,
} from '../../src/definition/flatten.js';
import {
  ASYNC_GUIDANCE_KEY,
  DEFAULT_GUIDANCE,
  SYNC_GUIDANCE_KEY,
  mergeGuidance,
} from '../../src/definition/guidance.js';
import type { ToolDefinition } from '../../src/definition/schema.js';
import { fixture, leavesOf } from './helpers.js';

function readDefinition(...segments: string[]): ToolDefinition {
  return JSON.parse(readFileSync(fixture(...segments), 'utf8')) as ToolDefinition;
}

function byName(leaves: readonly ToolLeaf[]): Map<string, ToolLeaf> {
  return new Map(leaves.map((leaf) => [leaf.name, leaf]));
}

function leaf(leaves: readonly ToolLeaf[], name: string): ToolLeaf {
  const found = byName(leaves).get(name);
  if (found === undefined)
    throw new Error(`no leaf ${name} in ${leaves.map((l) => l.name).join(', ')}`);
  return found;
}

const cargo = readDefinition('valid', 'cargo.json');

describe('naming', () => {
  it('SPEC §2 naming: one tool per leaf, named <name>_<path>, in declared order', () => {
    expect(flattenDefinition(cargo).map((l) => l.name)).toEqual([
      'cargo_build',
      'cargo_fmt',
      'cargo_fmt_check',
      'cargo_nextest_run',
      'cargo_add',
      'cargo_publish',
      'cargo_check-all',
    ]);
  });

  it('SPEC §2 naming: nested subcommands give cargo_nextest_run with the path passed as argv words', () => {
    const run = leaf(flattenDefinition(cargo), 'cargo_nextest_run');
    expect(run.subcommandPath).toEqual(['nextest', 'run']);
    expect(run.command).toEqual(['cargo']);
    expect(run.pointer).toBe('/subcommand/2/subcommand/0');
    expect(run.positionals.map((p) => p.name)).toEqual(['filter']);
  });

  it('SPEC §2 naming: a leaf named "default" collapses into its parent, in the name and the path', () => {
    const fmt = leaf(flattenDefinition(cargo), 'cargo_fmt');
    expect(fmt.subcommandPath).toEqual(['fmt']);
    expect(fmt.pointer).toBe('/subcommand/1/subcommand/0');
    expect(fmt.baseDescription).toBe('Format every source file.');
  });

  it('SPEC §2 naming: a default leaf directly under the tool is the tool <name>', () => {
    const [rg, ...rest] = flattenDefinition(readDefinition('catalog', 'rg.json'));
    expect(rest).toEqual([]);
    expect(rg).toMatchObject({ name: 'rg', subcommandPath: [], pointer: '/subcommand/0' });
    expect(rg?.positionals.map((p) => p.name)).toEqual(['pattern', 'path']);
  });

  it('SPEC §2 naming: a tool without subcommands is one tool named <name>', () => {
    const [date, ...rest] = flattenDefinition(readDefinition('valid', 'date.json'));
    expect(rest).toEqual([]);
    expect(date).toMatchObject({
      name: 'date',
      definitionName: 'date',
      pointer: '',
      subcommandPath: [],
      baseDescription: 'Print the current date and time.',
      options: [],
      positionals: [],
      sequence: undefined,
    });
  });

  it('SPEC §2 naming: command carries leading fixed arguments', () => {
    expect(splitCommand('  python3   -m pytest ')).toEqual(['python3', '-m', 'pytest']);
    const [only] = leavesOf({ name: 'pytest', description: 'd', command: 'python3 -m pytest' });
    expect(only?.command).toEqual(['python3', '-m', 'pytest']);
  });
});

describe('inheritance', () => {
  const leaves = flattenDefinition(cargo);

  it('R2.6: synchronous is unset → async; a subcommand overrides the tool', () => {
    expect(leaf(leaves, 'cargo_build').synchronous).toBe(false);
    expect(leaf(leaves, 'cargo_add').synchronous).toBe(true);
    expect(leaf(leaves, 'cargo_fmt').synchronous).toBe(true);
    expect(leaf(leaves, 'cargo_fmt_check').synchronous).toBe(false);
  });

  it('R2.6: synchronous set on the tool or a branch reaches every leaf below unless overridden', () => {
    const tree = leavesOf({
      name: 't',
      description: 'd',
      command: 't',
      synchronous: true,
      subcommand: [
        { name: 'a', description: 'a' },
        {
          name: 'b',
          description: 'b',
          synchronous: false,
          subcommand: [
            { name: 'c', description: 'c' },
            { name: 'd', description: 'd', synchronous: true },
          ],
        },
      ],
    });
    expect(tree.map((l) => [l.name, l.synchronous])).toEqual([
      ['t_a', true],
      ['t_b_c', false],
      ['t_b_d', true],
    ]);
  });

  it('R2.6: timeout_seconds inherits from the nearest ancestor that sets it', () => {
    expect(leaf(leaves, 'cargo_build').timeoutSeconds).toBe(600);
    expect(leaf(leaves, 'cargo_nextest_run').timeoutSeconds).toBe(1800);
    const [date] = flattenDefinition(readDefinition('valid', 'date.json'));
    expect(date?.timeoutSeconds).toBe(1);
    const [none] = leavesOf({ name: 'n', description: 'd', command: 'n' });
    expect(none?.timeoutSeconds).toBeUndefined();
  });

  it('R2.6: guidance_key inherits and a subcommand overrides it', () => {
    expect(leaf(leaves, 'cargo_build').guidanceKey).toBe('cargo_hints');
    expect(leaf(leaves, 'cargo_nextest_run').guidanceKey).toBe('cargo_hints');
    expect(leaf(leaves, 'cargo_add').guidanceKey).toBe(SYNC_GUIDANCE_KEY);
  });

  it('R2.6: enabled: false on a tool or a branch disables every leaf below', () => {
    expect(leaf(leaves, 'cargo_publish').enabled).toBe(false);
    expect(leaf(leaves, 'cargo_build').enabled).toBe(true);
    const legacy = flattenDefinition(readDefinition('valid', 'legacy.json'));
    expect(legacy.map((l) => [l.name, l.enabled])).toEqual([['legacy_all', false]]);
    const branch = leavesOf({
      name: 'b',
      description: 'd',
      command: 'b',
      subcommand: [
        {
          name: 'x',
          description: 'x',
          enabled: false,
          subcommand: [{ name: 'y', description: 'y', enabled: true }],
        },
      ],
    });
    expect(branch[0]?.enabled).toBe(false);
  });
});

describe('guidance in descriptions', () => {
  const guidance = mergeGuidance({ cargo_hints: 'Cargo hint.' });
  const asyncBlock = DEFAULT_GUIDANCE[ASYNC_GUIDANCE_KEY] ?? '';
  const leaves = flattenDefinition(cargo);

  it('R2.4: an async leaf without guidance_key gets the async guidance before its description', () => {
    const [only] = leavesOf({ name: 'x', description: 'Compile.', command: 'x' });
    if (only === undefined) throw new Error('no leaf');
    const description = describeLeaf(only, mergeGuidance(undefined));
    expect(description).toBe(`${asyncBlock}\n\nCompile.`);
    expect(description).toMatch(/Continue with other work/);
    // R2.7: how the result really reaches the model (log messages do not).
    expect(description).toMatch(/its result is put before the result of your next tool call/);
  });

  it('R2.4: an async leaf with a custom guidance_key keeps the async guidance and adds the custom block', () => {
    expect(describeLeaf(leaf(leaves, 'cargo_build'), guidance)).toBe(
      `${asyncBlock}\n\nCargo hint.\n\nCompile the current package.`,
    );
  });

  it('R2.4: a sync leaf gets no async guidance; its own guidance_key block still applies', () => {
    expect(describeLeaf(leaf(leaves, 'cargo_fmt'), guidance)).toBe(
      'Cargo hint.\n\nFormat every source file.',
    );
    expect(describeLeaf(leaf(leaves, 'cargo_add'), guidance)).toBe(
      `${DEFAULT_GUIDANCE[SYNC_GUIDANCE_KEY] ?? ''}\n\nAdd a dependency to Cargo.toml.`,
    );
    const [date] = flattenDefinition(readDefinition('valid', 'date.json'));
    if (date === undefined) throw new Error('no leaf');
    expect(describeLeaf(date, guidance)).toBe('Print the current date and time.');
  });

  it('R2.4: tool_guidance.json can override the default async block; it is not repeated', () => {
    const overridden = mergeGuidance({ [ASYNC_GUIDANCE_KEY]: 'Custom async text.' });
    const [only] = leavesOf({
      name: 'x',
      description: 'Compile.',
      command: 'x',
      guidance_key: ASYNC_GUIDANCE_KEY,
    });
    if (only === undefined) throw new Error('no leaf');
    expect(describeLeaf(only, overridden)).toBe('Custom async text.\n\nCompile.');
  });
});
