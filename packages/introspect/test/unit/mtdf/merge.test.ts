// SPEC §15 introspection: re-running keeps the person's edits — a three-way merge of the last
// discovered file, the file as edited, and the newly discovered one.
import { describe, expect, it } from 'vitest';
import { mergeDiscovered } from '../../../src/mtdf/merge.js';

const option = (name: string, description = `the ${name} option`) => ({
  name,
  type: 'boolean',
  description,
});
const tool = (subcommand: unknown[], description = 'a tool') => ({
  name: 'tool',
  description,
  command: 'tool',
  subcommand,
});
const sub = (name: string, options: unknown[], description = `the ${name} subcommand`) => ({
  name,
  description,
  options,
});

describe('mergeDiscovered', () => {
  it('SPEC §15 introspection: nothing edited: the file follows the program, and the report says what came and went', () => {
    const base = tool([sub('build', [option('a'), option('b')]), sub('old', [])]);
    const now = tool([sub('build', [option('a'), option('c')]), sub('new', [])]);
    const { definition, report } = mergeDiscovered(base, base, now);
    expect(definition).toEqual(now);
    expect(report).toEqual({
      added: ['build › --c', 'new'],
      removed: ['build › --b', 'old'],
      keptEdited: [],
    });
  });

  it("SPEC §15 introspection: the person's changes, deletions and additions are kept; new options still arrive", () => {
    const base = tool([sub('build', [option('a'), option('b'), option('d')]), sub('test', [])]);
    const edited = tool(
      [
        sub('build', [option('a', 'my own words'), option('mine')], 'builds, my way'),
        // `test` deleted by the person
      ],
      'my tool',
    );
    const now = tool(
      [sub('build', [option('a', 'the new help text'), option('d'), option('c')]), sub('test', [])],
      'a tool, new text',
    );
    const { definition, report } = mergeDiscovered(base, edited, now);
    expect(definition).toEqual(
      tool(
        [
          sub(
            'build',
            [option('a', 'my own words'), option('c'), option('mine')],
            'builds, my way',
          ),
        ],
        'my tool',
      ),
    );
    // b and d: the person deleted them (d is still in the program, and stays deleted).
    expect(report).toEqual({ added: ['build › --c'], removed: [], keptEdited: [] });
  });

  it('SPEC §15 introspection: what the program dropped but the person had changed is kept, and said', () => {
    const base = tool([sub('build', [option('a')]), sub('gone', [option('x')])]);
    const edited = tool([
      sub('build', [option('a', 'edited')]),
      sub('gone', [option('x', 'edited')]),
    ]);
    const now = tool([sub('build', [])]);
    const { definition, report } = mergeDiscovered(base, edited, now);
    expect(definition).toEqual(
      tool([sub('build', [option('a', 'edited')]), sub('gone', [option('x', 'edited')])]),
    );
    expect(report.keptEdited).toEqual(['build › --a', 'gone']);
    expect(report.removed).toEqual([]);
  });

  it('SPEC §15 introspection: a key the person added or removed at any level stays as they left it', () => {
    const base = { ...tool([sub('build', [option('a')])]), timeout_seconds: 60 };
    const edited = { ...tool([{ ...sub('build', [option('a')]), synchronous: true }]) };
    const now = { ...tool([sub('build', [option('a')])]), timeout_seconds: 120 };
    const { definition } = mergeDiscovered(base, edited, now);
    expect(definition).toEqual(tool([{ ...sub('build', [option('a')]), synchronous: true }]));
  });
});
