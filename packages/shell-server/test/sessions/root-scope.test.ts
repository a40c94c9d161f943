// The scope a session takes from its client's first root (R8D.7): checked like --sandbox-scope.
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { scopeOfRoot } from '../../src/sessions/root-scope.js';
import { E2E } from '../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

describe('scopeOfRoot', () => {
  it('R8D.7: a file:// root naming a directory is its real path', async () => {
    const dir = await e2e.outsideDir();
    await mkdir(join(dir, 'project'));
    await symlink(join(dir, 'project'), join(dir, 'link'));
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'project')).href)).toBe(
      await realpath(join(dir, 'project')),
    );
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'link')).href)).toBe(join(dir, 'project'));
    // Percent-encoded characters are decoded.
    await mkdir(join(dir, 'with space'));
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'with space')).href)).toBe(
      join(dir, 'with space'),
    );
  });

  it('R8D.7: the filesystem root, a missing path, a file and a URI that is not file:// are refused, naming the root', async () => {
    const dir = await e2e.outsideDir();
    await writeFile(join(dir, 'file'), '');
    await expect(scopeOfRoot('file:///')).rejects.toThrow(
      /cannot be the filesystem root \(\/, from the client's first root file:\/\/\/\)/,
    );
    await expect(scopeOfRoot(pathToFileURL(join(dir, 'missing')).href)).rejects.toThrow(
      /does not exist/,
    );
    await expect(scopeOfRoot(pathToFileURL(join(dir, 'file')).href)).rejects.toThrow(
      /is not a directory/,
    );
    await expect(scopeOfRoot('https://example.com/x')).rejects.toThrow(
      "the client's first root https://example.com/x is not a file:// URI of a local directory",
    );
    await expect(scopeOfRoot('file://elsewhere.example/x')).rejects.toThrow(/not a file:\/\/ URI/);
    await expect(scopeOfRoot('relative/path')).rejects.toThrow(/not a file:\/\/ URI/);
  });
});
