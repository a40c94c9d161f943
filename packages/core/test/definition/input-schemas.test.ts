// SPEC §2: a tool's input schema is compiled at its first call (ArgumentValidator), and by
// ahma-validate ahead; no valid file may make tools/call fail on its schema. Here every tool of
// every tool file in the repository (catalog, this repository's own tools, fixtures, the Rust
// ahma's files) compiles and accepts a minimal valid call.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../../src/definition/input-schema.js';
import { loadTools } from '../../src/definition/load.js';
import { FIXTURES } from './helpers.js';
import { minimalArgs } from './minimal-args.js';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');
const SHELL_FIXTURES = join(ROOT, 'packages', 'shell-server', 'test', 'fixtures', 'tools');

/** Every directory of tool files: the catalog, .ahma/tools and the valid fixture folders. */
const DIRS = [
  join(ROOT, 'tools'),
  join(ROOT, '.ahma', 'tools'),
  SHELL_FIXTURES,
  ...['valid', 'catalog', 'upstream-ahma', 'upstream-round2', 'warnings'].map((name) =>
    join(FIXTURES, name),
  ),
  join(FIXTURES, 'upstream-round2', 'ahma-tools-2025-12'),
].filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true);

describe('SPEC §2: input schemas of every tool file', () => {
  it.each(DIRS)(
    'SPEC §2: every tool in %s compiles and accepts a minimal valid call',
    async (dir) => {
      expect(readdirSync(dir).some((name) => name.endsWith('.json'))).toBe(true);
      const { tools } = await loadTools({ toolsDir: { dir, origin: 'option' } });
      expect(tools.length).toBeGreaterThan(0);
      const validator = new ArgumentValidator();
      for (const tool of tools) {
        const args = minimalArgs(tool.inputSchema as Parameters<typeof minimalArgs>[0]);
        expect(validator.validate(tool.inputSchema, args), tool.name).toEqual([]);
      }
    },
  );
});
