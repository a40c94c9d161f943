// test/ mirrors src/ (docs/architecture.md): a test of a module sits in the test folder of the
// module's own folder; only a few folders test something else and are named for it.
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

/** Folders of test/ that are not folders of src/: what each holds. */
const OWN_FOLDERS: Readonly<Record<string, string>> = {
  e2e: 'the built binary driven over stdio',
  'red-team': 'exploits against the sandbox through the built server',
  support: 'the shared harness',
  fixtures: 'tool files the tests serve',
};

function folders(root: string): string[] {
  return readdirSync(root, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
}

describe('test layout', () => {
  it('issue 12: every folder of test/ is a folder of src/ or one of the few named for what they test', () => {
    const source = new Set(folders(join(PACKAGE, 'src')));
    const strays = folders(join(PACKAGE, 'test')).filter((folder) => {
      const [top = ''] = folder.split('/');
      return !source.has(folder) && !(top in OWN_FOLDERS);
    });
    expect(strays).toEqual([]);
  });
});
