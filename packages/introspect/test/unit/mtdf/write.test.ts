// SPEC §15 introspection: the MTDF file written from recorded help texts (no process): it validates
// as the server checks it, carries the types, aliases, paths and choices the help gives, passes
// find's single-dash options verbatim, and leaves out (with a note) what cannot be a parameter.
import { readFileSync } from 'node:fs';
import { DocumentChecker } from '@ahma/core';
import { describe, expect, it } from 'vitest';
import { writeDefinition } from '../../../src/mtdf/write.js';
import { parseHelp } from '../../../src/parse/index.js';
import type { HelpModel } from '../../../src/parse/model.js';
import type { Discovered } from '../../../src/run/walk.js';

type Json = Record<string, unknown>;
const help = (path: string) =>
  readFileSync(new URL(`../../fixtures/help/${path}`, import.meta.url), 'utf8');
const single = (model: HelpModel): Discovered => ({
  path: [],
  model,
  helpArgs: ['--help'],
  children: [],
});
const options = (definition: Json, leaf = 'default'): Json[] =>
  ((definition['subcommand'] as Json[]).find((each) => each['name'] === leaf)?.['options'] ??
    []) as Json[];
const named = (list: Json[], name: string) => list.find((each) => each['name'] === name);
const valid = (definition: Json) =>
  new DocumentChecker({ compileInputSchemas: true }).checkDefinition(
    'x.json',
    JSON.stringify(definition),
  ).ok;

describe('writeDefinition', () => {
  it('SPEC §15 introspection: grep 3.8: one tool, flags as booleans with aliases, NUM as integer, FILE as a path', () => {
    const { definition } = writeDefinition(
      single(parseHelp(help('grep/3.8/root.txt'), 'grep')),
      'grep',
    );
    expect(valid(definition)).toBe(true);
    const grep = options(definition);
    expect(named(grep, 'ignore-case')).toMatchObject({ type: 'boolean', alias: 'i' });
    expect(named(grep, 'max-count')).toMatchObject({ type: 'integer', alias: 'm' });
    expect(named(grep, 'file')).toMatchObject({ type: 'string', format: 'path' });
    expect(named(grep, 'help')).toBeUndefined();
    expect(named(grep, 'version')).toBeUndefined();
  });

  it('SPEC §15 introspection: an optional value is passed joined (--color=WHEN), with its choices', () => {
    const { definition } = writeDefinition(
      single(parseHelp(help('grep/3.8/root.txt'), 'grep')),
      'grep',
    );
    expect(named(options(definition), 'color')).toMatchObject({ type: 'string', joined: true });
    expect(named(options(definition), 'color')?.['alias']).toBeUndefined();
  });

  it('SPEC §15 introspection: find 4.9.0: single-dash options keep their one dash (-name, -maxdepth N)', () => {
    const { definition } = writeDefinition(
      single(parseHelp(help('find/4.9.0/root.txt'), 'find')),
      'find',
    );
    expect(valid(definition)).toBe(true);
    const find = options(definition);
    expect(named(find, '-name')).toMatchObject({ type: 'string' });
    expect(named(find, '-maxdepth')).toMatchObject({ type: 'integer' });
    expect(named(find, 'name')).toBeUndefined();
  });

  it('SPEC §15 introspection: subcommands nest as the program nests them; a parent keeps only its children', () => {
    const root = parseHelp(help('git/2.39.5/root.txt'), 'git');
    const commit = parseHelp(help('git/2.39.5/commit.txt'), 'git', 'git');
    const discovered: Discovered = {
      path: [],
      model: { ...root, subcommands: [{ name: 'commit' }] },
      helpArgs: ['--help'],
      children: [{ path: ['commit'], model: commit, helpArgs: ['commit', '-h'], children: [] }],
    };
    const { definition, notes } = writeDefinition(discovered, 'git');
    expect(valid(definition)).toBe(true);
    expect(named(options(definition, 'commit'), 'message')).toMatchObject({
      type: 'string',
      alias: 'm',
    });
    expect(notes.join('\n')).toMatch(/own options \(before a subcommand\) are not offered/);
    expect(definition['availability_check']).toEqual({ command: 'git', args: ['--help'] });
  });

  it('SPEC §15 introspection: an option named like a meta-parameter or twice is left out, with a note', () => {
    const model: HelpModel = {
      style: 'gnu',
      subcommands: [],
      options: [
        { long: 'stdin', short: 'i', description: 'keep stdin open' },
        { long: 'verbose', short: 'v' },
        { long: 'verbose' },
        { long: 'timeout_seconds', value: { name: 'N', type: 'integer' } },
      ],
      positionals: [{ name: 'file', required: true, repeated: true, path: true }],
      unparsed: ['  ~~weird line~~'],
    };
    const { definition, notes } = writeDefinition(single(model), '/opt/tool/bin/my tool');
    expect(valid(definition)).toBe(true);
    expect(definition['name']).toBe('my');
    expect(options(definition).map((each) => each['name'])).toEqual(['verbose']);
    const leaf = (definition['subcommand'] as Json[])[0];
    expect(leaf?.['positional_args']).toEqual([
      { name: 'file', type: 'array', items: { type: 'string', format: 'path' }, required: true },
    ]);
    expect(notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/option --stdin left out \(a meta-parameter/),
        expect.stringMatching(/option --verbose left out/),
        expect.stringMatching(/option --timeout_seconds left out/),
        expect.stringMatching(/not read: +~~weird line~~/),
      ]),
    );
  });
});
