// The scope a session takes from its client's first root (R8D.7), bounded by the server's policy
// (R8D.15): within the allowed roots, never on a pseudo file system, never /, the temp directory or
// $HOME themselves, apart from the private state.
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { rootPolicy, scopeOfRoot, type RootPolicy } from '../../src/isolation/root-scope.js';
import { E2E } from '../support/harness.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

/** Everything the e2e directories live in is allowed: the refusals tested are the others. */
const OPEN: RootPolicy = { allowed: ['/var/tmp'], forbidden: [], privatePaths: [] };

describe('scopeOfRoot', () => {
  it('R8D.7: a file:// root naming a directory is its real path', async () => {
    const dir = await e2e.outsideDir();
    await mkdir(join(dir, 'project'));
    await symlink(join(dir, 'project'), join(dir, 'link'));
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'project')).href, OPEN)).toBe(
      await realpath(join(dir, 'project')),
    );
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'link')).href, OPEN)).toBe(
      join(dir, 'project'),
    );
    // Percent-encoded characters are decoded.
    await mkdir(join(dir, 'with space'));
    expect(await scopeOfRoot(pathToFileURL(join(dir, 'with space')).href, OPEN)).toBe(
      join(dir, 'with space'),
    );
  });

  it('R8D.7: the filesystem root, a missing path, a file and a URI that is not file:// are refused, naming the root', async () => {
    const dir = await e2e.outsideDir();
    await writeFile(join(dir, 'file'), '');
    await expect(scopeOfRoot('file:///', { ...OPEN, allowed: ['/'] })).rejects.toThrow(
      "the client's first root file:/// is the filesystem root",
    );
    await expect(scopeOfRoot(pathToFileURL(join(dir, 'missing')).href, OPEN)).rejects.toThrow(
      /does not exist/,
    );
    await expect(scopeOfRoot(pathToFileURL(join(dir, 'file')).href, OPEN)).rejects.toThrow(
      /is not a directory/,
    );
    await expect(scopeOfRoot('https://example.com/x', OPEN)).rejects.toThrow(
      "the client's first root https://example.com/x is not a file:// URI of a local directory",
    );
    await expect(scopeOfRoot('file://elsewhere.example/x', OPEN)).rejects.toThrow(
      /not a file:\/\/ URI/,
    );
    await expect(scopeOfRoot('relative/path', OPEN)).rejects.toThrow(/not a file:\/\/ URI/);
  });

  it('R8D.15: a root outside every allowed root is refused with a line naming --allowed-roots', async () => {
    const [allowed, outside] = await Promise.all([e2e.outsideDir(), e2e.outsideDir()]);
    await mkdir(join(allowed, 'project'));
    const policy: RootPolicy = { allowed: [allowed], forbidden: [], privatePaths: [] };
    expect(await scopeOfRoot(pathToFileURL(join(allowed, 'project')).href, policy)).toBe(
      join(allowed, 'project'),
    );
    expect(await scopeOfRoot(pathToFileURL(allowed).href, policy)).toBe(allowed);
    for (const root of [outside, '/etc', '/usr/local', '/home']) {
      await expect(scopeOfRoot(pathToFileURL(root).href, policy)).rejects.toThrow(
        /lies outside every allowed root .*--allowed-roots DIR\[,DIR…\]/,
      );
    }
    // A link inside an allowed root leading out of it is judged by where it leads.
    await symlink('/etc', join(allowed, 'etc-link'));
    await expect(
      scopeOfRoot(pathToFileURL(join(allowed, 'etc-link')).href, policy),
    ).rejects.toThrow(/\(\/etc\) lies outside every allowed root/);
    // A sibling named like the allowed root as a string prefix is not beneath it.
    const prefixed = `${allowed}x`;
    await mkdir(prefixed);
    await expect(scopeOfRoot(pathToFileURL(prefixed).href, policy)).rejects.toThrow(
      /lies outside every allowed root/,
    );
    await import('node:fs/promises').then(({ rm }) => rm(prefixed, { recursive: true }));
  });

  it.each([
    ['file:///proc/self', 'proc'],
    ['file:///proc', 'proc'],
    ['file:///proc/self/cwd', 'proc'],
    ['file:///proc/self/root/etc', 'proc'],
    ['file:///sys/kernel', 'sysfs'],
    ['file:///dev', 'devtmpfs'],
    ['file:///dev/pts', 'devtmpfs'],
  ])(
    'R8D.15: %s lies on a pseudo file system (%s) and is refused, even where every root is allowed',
    async (uri, type) => {
      await expect(scopeOfRoot(uri, { ...OPEN, allowed: ['/'] })).rejects.toThrow(
        new RegExp(`lies on the kernel's ${type} file system`),
      );
    },
  );

  it("R8D.15: a link in an allowed root to the server's /proc/self is refused, never resolved by the server", async () => {
    const allowed = await e2e.outsideDir();
    await symlink('/proc/self', join(allowed, 'me'));
    await symlink('/proc/self/cwd', join(allowed, 'my-cwd'));
    const policy: RootPolicy = { allowed: [allowed, '/'], forbidden: [], privatePaths: [] };
    for (const name of ['me', 'my-cwd']) {
      await expect(scopeOfRoot(pathToFileURL(join(allowed, name)).href, policy)).rejects.toThrow(
        /lies on the kernel's proc file system \(at \/proc\)/,
      );
    }
  });

  it('R8D.15: the temp directory, $HOME and a directory holding them are refused; what lies beneath them is not', async () => {
    const base = await e2e.outsideDir();
    const [home, temp] = [join(base, 'home'), join(base, 'tmp')];
    await Promise.all([mkdir(join(home, 'project'), { recursive: true }), mkdir(temp)]);
    const policy = await rootPolicy({
      allowedRoots: [base],
      scope: base,
      env: { HOME: home, TMPDIR: temp },
      privatePaths: [],
    });
    await expect(scopeOfRoot(pathToFileURL(home).href, policy)).rejects.toThrow(
      /is the home directory/,
    );
    await expect(scopeOfRoot(pathToFileURL(temp).href, policy)).rejects.toThrow(
      /is the temp directory/,
    );
    await expect(scopeOfRoot(pathToFileURL(base).href, policy)).rejects.toThrow(
      /holds the (temp|home) directory/,
    );
    expect(await scopeOfRoot(pathToFileURL(join(home, 'project')).href, policy)).toBe(
      join(home, 'project'),
    );
  });

  it("R8D.15: a root holding or inside the server's private state is refused", async () => {
    const base = await e2e.outsideDir();
    await mkdir(join(base, 'state', 'inner'), { recursive: true });
    const policy: RootPolicy = {
      allowed: [base],
      forbidden: [],
      privatePaths: [join(base, 'state')],
    };
    for (const root of [base, join(base, 'state'), join(base, 'state', 'inner')]) {
      await expect(scopeOfRoot(pathToFileURL(root).href, policy)).rejects.toThrow(
        /overlaps the server's private state/,
      );
    }
  });

  it('R8D.15: rootPolicy defaults to the sandbox scope and refuses an allowed root that is no directory', async () => {
    const scope = await e2e.outsideDir();
    const policy = await rootPolicy({ allowedRoots: [], scope, env: {}, privatePaths: [] });
    expect(policy.allowed).toEqual([scope]);
    await expect(
      rootPolicy({ allowedRoots: [join(scope, 'missing')], scope, env: {}, privatePaths: [] }),
    ).rejects.toThrow(/--allowed-roots: .*missing is not an existing directory/);
  });
});
