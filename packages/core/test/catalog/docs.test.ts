// docs/catalog.md is checked against the catalog it describes: its generated blocks must equal what
// the loaded tools/ files render to, and every tool name must appear (and no stale one). Refresh
// the blocks with: AHMA_UPDATE_CATALOG_DOC=1 npx vitest run test/catalog/docs.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractBlocks, renderBlocks, replaceBlocks, type Blocks } from './catalog-doc.js';
import { catalog, CATALOG_DOC, CATALOG_NAMES, type Catalog } from './helpers.js';

const UPDATE = process.env['AHMA_UPDATE_CATALOG_DOC'] === '1';

let loaded: Catalog;
let expected: Blocks;
let document: string;

beforeAll(async () => {
  loaded = await catalog();
  expected = renderBlocks(loaded.result.definitions, loaded.tools);
  document = readFileSync(CATALOG_DOC, 'utf8');
  if (UPDATE) {
    document = replaceBlocks(document, expected);
    writeFileSync(CATALOG_DOC, document);
  }
});

describe('docs/catalog.md', () => {
  it('R1.2: has a generated block for the overview and for every catalog definition', () => {
    expect([...extractBlocks(document).keys()].sort()).toEqual(
      ['overview', ...CATALOG_NAMES].sort(),
    );
  });

  it('R1.2: its generated blocks match the tools/ files (regenerate them when a file changes)', () => {
    const actual = extractBlocks(document);
    for (const [name, body] of expected) {
      expect(
        actual.get(name),
        `docs/catalog.md block "${name}" is stale: run AHMA_UPDATE_CATALOG_DOC=1 npx vitest run test/catalog/docs.test.ts in packages/core`,
      ).toBe(body);
    }
  });

  it('R1.2: names every catalog tool, and says how to enable every definition with --tools', () => {
    const missing = loaded.tools
      .map((tool) => tool.name)
      .filter((name) => !document.includes(`\`${name}\``));
    expect(missing).toEqual([]);
    for (const name of CATALOG_NAMES) expect(document).toContain(`--tools ${name}`);
  });

  it('R1.2: names no tool that the catalog does not produce', () => {
    const known = new Set<string>([...loaded.tools.map((tool) => tool.name), ...CATALOG_NAMES]);
    const prefix = new RegExp(`^(${CATALOG_NAMES.join('|')})_[\\w-]+$`);
    const mentioned = [...document.matchAll(/`([\w-]+)`/g)]
      .map((match) => match[1] ?? '')
      .filter((word) => prefix.test(word));
    expect(mentioned.filter((word) => !known.has(word))).toEqual([]);
    expect(mentioned.length).toBeGreaterThan(loaded.tools.length);
  });
});
