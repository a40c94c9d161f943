// generate-tool-schema, called in-process: the committed schema is current, the default OUT_DIR
// and --stdout. The binary itself is spawned by test/e2e.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runGenerateSchema, schemaFiles } from '../../src/run.js';
import { tempDirs } from '../support/temp.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const tempDir = tempDirs();

/** generate-tool-schema ARGS in `cwd`; what it printed and its exit status. */
async function generate(args: string[], cwd: string) {
  let stdout = '';
  let stderr = '';
  const code = await runGenerateSchema(args, {
    cwd,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe.concurrent('generate-tool-schema, in-process', () => {
  it('R5.1: the committed docs/mtdf-schema.json is current (run `pnpm generate-schema` if this fails)', async () => {
    for (const [name, text] of Object.entries(schemaFiles())) {
      expect(await readFile(join(repoRoot, 'docs', name), 'utf8'), `docs/${name} is stale`).toBe(
        text,
      );
    }
  });

  it('R5.1: defaults OUT_DIR to docs/ of the working directory', async () => {
    const cwd = await tempDir();
    expect((await generate([], cwd)).stdout).toBe(
      `wrote ${join('docs', 'mtdf-schema.json')}\nwrote ${join('docs', 'tool-guidance-schema.json')}\n`,
    );
    expect(await readFile(join(cwd, 'docs', 'mtdf-schema.json'), 'utf8')).toBe(
      schemaFiles()['mtdf-schema.json'],
    );
  });

  it('R5.1: --stdout prints the schema and writes nothing', async () => {
    const cwd = await tempDir();
    const run = await generate(['--stdout'], cwd);
    expect(run.stdout).toBe(schemaFiles()['mtdf-schema.json']);
    expect(await readdir(cwd)).toEqual([]);
  });
});
