// The synchronous real paths the sandbox policy is worked out with (R7.10, R7.11).
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPrefix, realpathOrUndefined } from '../../src/paths/real-sync.js';

let dir = '';

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'ahma-real-sync-')));
  await mkdir(join(dir, 'target'));
  await symlink(join(dir, 'target'), join(dir, 'link'));
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('real paths, synchronously', () => {
  it('R7.10: an existing path resolves through its links; a missing one is undefined', () => {
    expect(realpathOrUndefined(join(dir, 'link'))).toBe(join(dir, 'target'));
    expect(realpathOrUndefined(join(dir, 'missing'))).toBeUndefined();
  });

  it('R7.10: a path to be is placed where its longest existing prefix really is', () => {
    expect(realPrefix(join(dir, 'link', 'a', 'b'))).toBe(join(dir, 'target', 'a', 'b'));
    expect(realPrefix(join(dir, 'link'))).toBe(join(dir, 'target'));
    expect(realPrefix('/')).toBe('/');
  });
});
