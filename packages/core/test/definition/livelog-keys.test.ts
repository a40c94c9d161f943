// R7.9: the API key variables tool files name, read without opening what is not a regular file.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { livelogKeyVariables } from '../../src/definition/livelog-keys.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('livelogKeyVariables', () => {
  it('R7.9: every ${NAME} an api_key names, valid definition or not, and nothing from what is not JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ahma-livelog-keys-'));
    dirs.push(dir);
    const tool = (key: string) =>
      JSON.stringify({ name: 'watch', livelog: { llm_provider: { api_key: key } } });
    await writeFile(join(dir, 'a.json'), tool('${OPENAI_KEY}'));
    await writeFile(join(dir, 'b.json'), `\uFEFF${tool('${OTHER_KEY}')}`);
    await writeFile(join(dir, 'c.json'), tool('literal-key-not-a-reference'));
    await writeFile(join(dir, 'd.json'), '{ not json');
    await writeFile(join(dir, 'e.txt'), tool('${NOT_A_TOOL_FILE}'));
    expect(await livelogKeyVariables([dir, join(dir, 'missing')])).toEqual([
      'OPENAI_KEY',
      'OTHER_KEY',
    ]);
  });

  it('R7.6: a FIFO or a link to a device named like a tool file is skipped, never opened', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ahma-livelog-keys-'));
    dirs.push(dir);
    await run('mkfifo', [join(dir, 'fifo.json')]);
    await symlink('/dev/zero', join(dir, 'zero.json'));
    const started = Date.now();
    expect(await livelogKeyVariables([dir])).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
