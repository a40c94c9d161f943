// Core's layers stay straight (issue 12 item 3): `pnpm lint` runs scripts/check-import-cycles.mjs,
// which refuses any import cycle inside a package's src/, type-only imports included. Here the
// check is tried on a tree with a cycle (it must fail, naming it) and on this repository (clean).
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(
  new URL('../../../../scripts/check-import-cycles.mjs', import.meta.url),
);
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

function check(root?: string) {
  return spawnSync(process.execPath, [SCRIPT, ...(root === undefined ? [] : [root])], {
    encoding: 'utf8',
  });
}

describe('import cycles', () => {
  it('issue 12: a type-only cycle between two modules fails the check and is named', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ahma-cycles-'));
    made.push(root);
    const src = join(root, 'packages', 'demo', 'src');
    await mkdir(join(src, 'inner'), { recursive: true });
    await writeFile(
      join(src, 'a.ts'),
      "import type { B } from './inner/b.js';\nexport type A = B;\n",
    );
    await writeFile(
      join(src, 'inner', 'b.ts'),
      "export type { A as B } from '../a.js';\nexport const ok = 1;\n",
    );
    await writeFile(
      join(src, 'c.ts'),
      "import { ok } from './inner/b.js';\nexport const c = ok;\n",
    );
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /import cycle: packages\/demo\/src\/(a|inner\/b)\.ts → .* → packages\/demo\/src\/(a|inner\/b)\.ts/,
    );
    expect(result.stderr).not.toContain('c.ts');
  });

  it('issue 12: this repository has no import cycle', () => {
    const result = check();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
