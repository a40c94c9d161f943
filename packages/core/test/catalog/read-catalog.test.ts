// SPEC §3 bundles on demand: readCatalog lists every bundle of a catalog directory (what
// activate_tools offers), skipping the guidance file and reporting invalid files instead of failing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCatalog } from '../../src/index.js';
import { CATALOG_DIR, CATALOG_NAMES } from './helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('readCatalog', () => {
  it('SPEC §3 bundles: reads every bundled definition of tools/, by name, without diagnostics', async () => {
    const read = await readCatalog(CATALOG_DIR);
    expect(read.diagnostics).toEqual([]);
    expect(read.definitions.map((entry) => entry.definition.name)).toEqual([...CATALOG_NAMES]);
    const git = read.definitions.find((entry) => entry.definition.name === 'git');
    expect(git?.leaves.map((leaf) => leaf.name)).toContain('git_status');
  });

  it('SPEC §3 bundles: an invalid catalog file is reported and the others still load; tool_guidance.json is not a bundle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ahma-catalog-'));
    dirs.push(dir);
    const tool = (name: string) =>
      JSON.stringify({ name, description: `The ${name} tool.`, command: name });
    await writeFile(join(dir, 'b.json'), tool('beta'));
    await writeFile(join(dir, 'a.json'), tool('alpha'));
    await writeFile(join(dir, 'broken.json'), '{ "name": ');
    await writeFile(join(dir, 'tool_guidance.json'), JSON.stringify({ guidance_blocks: {} }));
    const read = await readCatalog(dir);
    expect(read.definitions.map((entry) => entry.definition.name)).toEqual(['alpha', 'beta']);
    expect(read.diagnostics.map((d) => d.file)).toEqual([join(dir, 'broken.json')]);
  });
});
