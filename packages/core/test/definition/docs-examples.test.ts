// R5.1: the JSON examples of every page in docs/ (and the README) are checked against the schema and the
// semantic rules, so the page cannot drift from what the validator accepts; the worked example's
// argv is what the page says it is.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/argv/prepare.js';
import { DocumentChecker } from '../../src/definition/check-document.js';
import { checkDefinitionSet, type CheckedDefinition } from '../../src/definition/definition-set.js';
import { describeLeaf } from '../../src/definition/flatten.js';
import { ASYNC_GUIDANCE_KEY, mergeGuidance } from '../../src/definition/guidance.js';

const root = join(import.meta.dirname, '..', '..', '..', '..');
// Every page of docs/ and the README: an example anywhere must validate.
const pages = [
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name)),
  join(root, 'README.md'),
];

/** Every ```json block of the pages, parsed. */
const examples: unknown[] = pages.flatMap((page) =>
  [...readFileSync(page, 'utf8').matchAll(/```json\n([^]*?)```/g)].map(
    (match) => JSON.parse(match[1] ?? '') as unknown,
  ),
);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;
const definitions = examples.filter((e) => isObject(e) && 'name' in e && 'command' in e);
const guidanceFiles = examples.filter((e) => isObject(e) && 'guidance_blocks' in e);

const checker = new DocumentChecker();
const guidance = mergeGuidance(
  Object.assign(
    {},
    ...guidanceFiles.map((file) => {
      const checked = checker.checkGuidance('tool_guidance.json', JSON.stringify(file));
      if (!checked.ok) throw new Error(JSON.stringify(checked.diagnostics));
      return checked.guidance.guidance_blocks;
    }),
  ) as Record<string, string>,
);

/** The page's whole definitions through every check: each file's, then the cross-file ones. */
function checkExamples() {
  const checked: CheckedDefinition[] = definitions.map((definition, index) => {
    const file = `example-${String(index)}.json`;
    const result = checker.checkDefinition(file, JSON.stringify(definition));
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    return { file, definition: result.definition, leaves: result.leaves };
  });
  return checkDefinitionSet(checked, guidance);
}

let scope = '';
beforeAll(async () => {
  scope = await mkdtemp('/var/tmp/ahma-docs-');
});
afterAll(() => rm(scope, { recursive: true, force: true }));

describe('docs/tool-definitions.md and README examples', () => {
  it('R5.1: every whole definition on the pages passes every check', () => {
    expect(definitions.length).toBeGreaterThan(0);
    expect(guidanceFiles.length).toBeGreaterThan(0);
    const set = checkExamples();
    expect(set.diagnostics).toEqual([]);
    expect(definitions.map((d) => (d as { name: string }).name)).toContain('files');
    expect(set.accepted).toHaveLength(definitions.length);
  });

  it('R5.3: the worked example runs the command lines the page describes', async () => {
    const notes = checkExamples().accepted.find((entry) => entry.definition.name === 'notes');
    if (notes === undefined) throw new Error('no notes example');
    const leaf = (name: string) => {
      const found = notes.leaves.find((candidate) => candidate.name === name);
      if (found === undefined) throw new Error(`no ${name}`);
      return found;
    };

    const add = await prepareInvocation(
      leaf('notes_add'),
      { text: 'line one\nline two', tag: ['todo'] },
      { scope },
    );
    try {
      expect(add.argv.slice(0, 5)).toEqual(['notes', 'add', '-t', 'todo', '-F']);
      expect(await readFile(add.argv[5] ?? '', 'utf8')).toBe('line one\nline two');
    } finally {
      await add.cleanup();
    }
    const search = await prepareInvocation(leaf('notes_search'), { query: 'todo' }, { scope });
    expect(search.argv).toEqual(['notes', 'search', '--limit', '20', 'todo']);
    const exported = await prepareInvocation(leaf('notes_export'), { directory: 'out' }, { scope });
    expect(exported.argv).toEqual(['notes', 'export', join(scope, 'out')]);
    await expect(
      prepareInvocation(leaf('notes_export'), { directory: '/etc' }, { scope }),
    ).rejects.toThrow(/outside the sandbox scope/);

    const description = describeLeaf(leaf('notes_export'), guidance);
    expect(description.startsWith(guidance[ASYNC_GUIDANCE_KEY] ?? '?')).toBe(true);
    expect(description).toContain(guidance['long_running'] ?? '?');
  });
});
