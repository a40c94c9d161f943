// src/layers.json is the dependency rule of this package's folders, and `pnpm lint` holds every
// import to it (scripts/check-layers.mjs). The check is tried here on small trees that break the
// rule each in one way (it must fail and say where), and on this repository (clean).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../../scripts/check-layers.mjs', import.meta.url));
const SRC = fileURLToPath(new URL('../src', import.meta.url));
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

function check(root?: string) {
  return spawnSync(process.execPath, [SCRIPT, ...(root === undefined ? [] : [root])], {
    encoding: 'utf8',
  });
}

/** A package `demo` whose layers are `folders` (name → imports) and whose files are `files`. */
async function tree(
  folders: Record<string, { imports: string[]; sdk?: boolean }>,
  files: Record<string, string>,
): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ahma-layers-'));
  made.push(root);
  const src = join(root, 'packages', 'demo', 'src');
  const layers = {
    root: { entry: 'index.ts', shared: ['package.ts'] },
    folders: Object.fromEntries(
      Object.entries(folders).map(([name, rule]) => [name, { job: name, sdk: false, ...rule }]),
    ),
  };
  await mkdir(src, { recursive: true });
  await writeFile(join(src, 'layers.json'), JSON.stringify(layers));
  for (const name of Object.keys(folders)) await mkdir(join(src, name), { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(src, path)), { recursive: true });
    await writeFile(join(src, path), text);
  }
  return root;
}

describe.concurrent('src/layers.json', () => {
  it('issue 29: a folder importing one that its entry does not list fails, named with both folders', async () => {
    const root = await tree(
      { high: { imports: ['low'] }, low: { imports: [] } },
      {
        'high/a.ts': "import { b } from '../low/b.js';\nexport const a = b;\n",
        'low/b.ts': 'export const b = 1;\n',
        'low/c.ts': "import { a } from '../high/a.js';\nexport const c = a;\n",
      },
    );
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "demo/src/low/c.ts (low) imports high/a.ts (high): not in low's imports",
    );
    expect(result.stderr).not.toContain('high/a.ts (high) imports');
  });

  it('issue 29: the MCP SDK outside a folder with "sdk": true fails; a dynamic import counts', async () => {
    const root = await tree(
      { settings: { imports: [] }, wire: { imports: [], sdk: true } },
      {
        'settings/a.ts':
          "export const load = () => import('@modelcontextprotocol/sdk/types.js');\n",
        'wire/b.ts': "export type { Tool } from '@modelcontextprotocol/sdk/types.js';\n",
      },
    );
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('demo/src/settings/a.ts (settings) imports the MCP SDK');
    expect(result.stderr).not.toContain('wire/b.ts');
  });

  it('issue 29: a file in no declared folder, or a folder importing the entry, fails', async () => {
    const root = await tree(
      { one: { imports: [] } },
      {
        'index.ts': "export { a } from './one/a.js';\n",
        'package.ts': "export const NAME = 'demo';\n",
        'stray.ts': 'export const s = 1;\n',
        'one/a.ts': "import { NAME } from '../package.js';\nexport const a = NAME;\n",
        'one/b.ts': "import { a } from '../index.js';\nexport const b = a;\n",
      },
    );
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('demo/src/stray.ts is in no folder of layers.json');
    expect(result.stderr).toContain('demo/src/one/b.ts imports index.ts, which only the entry may');
    expect(result.stderr).not.toContain('one/a.ts');
  });

  it('issue 29: a declared graph deeper than six folders, or with a cycle, fails', async () => {
    const chain = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7'];
    const deep = await tree(
      Object.fromEntries(chain.map((name, i) => [name, { imports: chain.slice(i + 1, i + 2) }])),
      {},
    );
    const cyclic = await tree({ a: { imports: ['b'] }, b: { imports: ['a'] } }, {});
    const [deepResult, cyclicResult] = [check(deep), check(cyclic)];
    expect(deepResult.status).toBe(1);
    expect(deepResult.stderr).toContain('demo: f1 is 7 levels deep');
    expect(deepResult.stderr).not.toContain('f2 is');
    expect(cyclicResult.status).toBe(1);
    expect(cyclicResult.stderr).toContain('demo: a is Infinity levels deep');
  });

  it("issue 29: docs/architecture.md's folder table is src/layers.json: each folder's job, imports and SDK", () => {
    const layers = JSON.parse(readFileSync(join(SRC, 'layers.json'), 'utf8')) as {
      folders: Record<string, { job: string; imports: string[]; sdk: boolean }>;
    };
    const doc = readFileSync(new URL('../../../docs/architecture.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z/]+)\/` +\| (.+?) +\| (.+?) +\| (yes|no) +\|$/gm)];
    const table = Object.fromEntries(
      rows.map(([, folder = '', job = '', imports = '', sdk = '']) => [
        folder,
        { job, imports: imports === '—' ? [] : imports.split(', '), sdk: sdk === 'yes' },
      ]),
    );
    expect(table).toEqual(layers.folders);
  });

  it('issue 29: this repository keeps its layers', () => {
    const result = check();
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
