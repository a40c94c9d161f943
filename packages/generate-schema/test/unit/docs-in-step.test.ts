// Keeps docs/tool-definitions.md honest: every key the generated schema allows must be documented
// there (as `key`), so a new field cannot ship undocumented.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { mtdfJsonSchema, toolGuidanceJsonSchema } from '@ahma/core';
import { describe, expect, it } from 'vitest';

const doc = fileURLToPath(new URL('../../../../docs/tool-definitions.md', import.meta.url));

function allKeys(schema: unknown, keys = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const item of schema) allKeys(item, keys);
  else if (schema !== null && typeof schema === 'object') {
    for (const [key, value] of Object.entries(schema)) {
      if (key === 'properties' && value !== null && typeof value === 'object') {
        for (const property of Object.keys(value)) keys.add(property);
      }
      allKeys(value, keys);
    }
  }
  return keys;
}

describe('docs/tool-definitions.md', () => {
  it('R1.1: documents every key of the MTDF and guidance schemas', async () => {
    const text = await readFile(doc, 'utf8');
    const keys = allKeys([mtdfJsonSchema(), toolGuidanceJsonSchema()]);
    expect(keys.size).toBeGreaterThan(25);
    const missing = [...keys].filter((key) => !text.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });
});
