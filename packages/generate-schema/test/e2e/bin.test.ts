// The built generate-tool-schema binary, spawned for real: argv, the exit status and the files it
// writes. Everything else is checked in-process (test/unit).
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../support/temp.js';

const bin = fileURLToPath(new URL('../../bin/generate-tool-schema.js', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const tempDir = tempDirs();

async function generate(args: string[], cwd: string) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe.concurrent('the generate-tool-schema binary', () => {
  it('R5.1: writes OUT_DIR/mtdf-schema.json, a draft 2020-12 schema that ajv compiles in strict mode (union types allowed)', async () => {
    const out = join(await tempDir(), 'nested', 'out');
    const run = await generate([out], repoRoot);
    expect(run.code).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['mtdf-schema.json', 'tool-guidance-schema.json']);
    const schema = JSON.parse(await readFile(join(out, 'mtdf-schema.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
    const valid = ajv.compile(schema);
    expect(valid({ name: 'ls', description: 'List files', command: 'ls' })).toBe(true);
    // SPEC §2 compat: a tool's top level is open, as upstream's; below it unknown keys are errors.
    expect(valid({ name: 'ls', description: 'List files', command: 'ls', comand: 'x' })).toBe(true);
    const subcommand = { name: 'all', description: 'All files', optons: [] };
    expect(
      valid({ name: 'ls', description: 'List files', command: 'ls', subcommand: [subcommand] }),
    ).toBe(false);
  });

  it('R5.1: exit 2 on a usage error', async () => {
    const run = await generate(['a', 'b'], repoRoot);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Usage: generate-tool-schema');
  });
});
