// Core's tests sit where what they test sits (issue 12 item 4): test/ mirrors src/, so the tests of
// src/process/shell-pool.ts are test/process/shell-pool.test.ts. The only other folders are the few
// named for what they test or hold that is no src module: the bundled catalog (the repository's
// tools/), the layering, the docs, and the fixtures and support the tests share.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGE_DIR = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The folders of test/ that mirror no folder of src/, each with everything inside it: the bundled
 * catalog (tools/), the layering, the docs, and the fixtures and support code the tests share.
 */
const NOT_SRC = ['catalog', 'docs', 'fixtures', 'layering', 'support'];

/**
 * Every folder below root that holds a file, itself or further down, as a path relative to root
 * with `/` between names ('a', 'a/b', …). Empty folders (what `git mv` leaves behind) do not count.
 */
function foldersBelow(root: string, prefix = ''): string[] {
  return readdirSync(join(root, prefix), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      const below = foldersBelow(root, folder);
      const holdsFile = readdirSync(join(root, folder), { withFileTypes: true }).some((child) =>
        child.isFile(),
      );
      return holdsFile || below.length > 0 ? [folder, ...below] : [];
    });
}

/** The test folders that are neither a folder of src/ nor inside one of NOT_SRC. */
function strays(srcFolders: readonly string[], testFolders: readonly string[]): string[] {
  const mirrored = new Set(srcFolders);
  return testFolders.filter(
    (folder) => !mirrored.has(folder) && !NOT_SRC.includes(folder.split('/')[0] ?? ''),
  );
}

describe('test/ mirrors src/', () => {
  it('issue 12: test/ mirrors src/: every folder under test/ is a folder of src/ or one of the few named for what they test', () => {
    const src = foldersBelow(join(PACKAGE_DIR, 'src'));
    const test = foldersBelow(join(PACKAGE_DIR, 'test'));
    expect(src.length).toBeGreaterThan(5);
    expect(strays(src, test)).toEqual([]);
  });

  it('issue 12: test/ mirrors src/: a folder named for no src folder is reported, nested ones too', () => {
    expect(
      strays(
        ['process', 'sandbox'],
        ['process', 'engine', 'fixtures', 'fixtures/broken', 'sandbox', 'sandbox/zygote'],
      ),
    ).toEqual(['engine', 'sandbox/zygote']);
  });
});
