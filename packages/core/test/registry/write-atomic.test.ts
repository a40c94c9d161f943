// writeFileAtomic (FR5, NFR2): the new content goes to a temporary file beside the target, is
// flushed, and renamed over it; readers see the old content or the new, never a mix. Temporaries of
// writers that died are removed; those of live writers are left alone.
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAlive } from '../../src/registry/write-atomic.js';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  atPath,
  atPathSource,
  caseDirs,
  deadPid,
  startNode,
  transpiledSources,
} from './helpers.js';

const cases = caseDirs('write-atomic');

const dir = cases.dir;

/** Polls until `condition` holds (10 s at most). */
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(5);
  }
}

describe('writeFileAtomic', () => {
  it('FR5: writes the file, creating its directory, with mode 0644 and no temporary left behind', async () => {
    const folder = await dir();
    const path = join(folder, 'deep', 'er', 'registry.json');
    await atPath.write(path, 'hello\n');
    expect(await readFile(path, 'utf8')).toBe('hello\n');
    expect((await stat(path)).mode & 0o777).toBe(0o644 & ~process.umask());
    expect(await readdir(join(folder, 'deep', 'er'))).toEqual(['registry.json']);
  });

  it('FR5: replaces an existing file by renaming a new one over it (a new inode; the old one untouched)', async () => {
    const path = join(await dir(), 'registry.json');
    await writeFile(path, 'old content');
    const before = await stat(path);
    await atPath.write(path, 'new');
    const after = await stat(path);
    expect(await readFile(path, 'utf8')).toBe('new');
    expect(after.ino).not.toBe(before.ino);
  });

  it('NFR2: a write that fails leaves the target as it was and removes its temporary', async () => {
    const folder = await dir();
    // The target is a non-empty directory: the rename over it fails.
    const path = join(folder, 'registry.json');
    await mkdir(path);
    await writeFile(join(path, 'keep'), 'kept');
    await expect(atPath.write(path, 'x')).rejects.toMatchObject({
      code: expect.stringMatching(/^(EISDIR|ENOTEMPTY|EEXIST)$/) as unknown,
    });
    expect(await readdir(folder)).toEqual(['registry.json']);
    expect(await readFile(join(path, 'keep'), 'utf8')).toBe('kept');
  });

  it('NFR2: a write that cannot start (its directory is a file) fails without leaving anything', async () => {
    const folder = await dir();
    await writeFile(join(folder, 'file'), 'x');
    await expect(atPath.write(join(folder, 'file', 'registry.json'), 'x')).rejects.toThrow();
    expect(await readdir(folder)).toEqual(['file']);
  });

  it('NFR2: a reader never sees a half-written file while writes go on', async () => {
    const path = join(await dir(), 'registry.json');
    const versions = ['a', 'b', 'c'].map((letter) => letter.repeat(512 * 1024));
    await atPath.write(path, versions[0] ?? '');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 30; i++) await atPath.write(path, versions[i % 3] ?? '');
      writing = false;
    })();
    let reads = 0;
    while (writing) {
      const text = await readFile(path, 'utf8');
      reads++;
      expect(versions.includes(text), `read ${String(text.length)} bytes`).toBe(true);
    }
    await writer;
    expect(reads).toBeGreaterThan(0);
  });

  it('NFR2: a writer killed mid-write leaves the old or the new content, never a mix; its temporaries go on cleanup', async () => {
    const folder = await dir();
    const path = join(folder, 'data.txt');
    const modules = await transpiledSources(await dir(), [
      'registry/write-atomic.ts',
      'registry/pinned-directory.ts',
    ]);
    const writer = atPathSource({
      pinned: modules['registry/pinned-directory.ts'] ?? '',
      write: modules['registry/write-atomic.ts'] ?? '',
    });
    const size = 4 * 1024 * 1024;
    for (let round = 0; round < 5; round++) {
      // A child replacing the file with writeFileAtomic, as fast as it can, until killed.
      const child = startNode(
        [
          writer,
          `const path = ${JSON.stringify(path)};`,
          'for (let i = 0; ; i++) {',
          `  await writeFileAtomic(path, String(i % 10).repeat(${String(size)}));`,
          '}',
        ].join('\n'),
      );
      await waitFor(async () => (await readdir(folder)).includes('data.txt'));
      // Kill it at an arbitrary moment of its loop.
      await sleep(20 + Math.floor(Math.random() * 200));
      child.kill('SIGKILL');
      const result = await child.done;
      expect(result.signal, result.stderr).toBe('SIGKILL');
      const text = await readFile(path, 'utf8');
      expect(text.length).toBe(size);
      expect(new Set(text).size).toBe(1);
      // Whatever temporary the kill left is the dead writer's, and is removed.
      await atPath.removeStale(path);
      expect(await readdir(folder)).toEqual(['data.txt']);
    }
  });
});

describe('removeStaleTemporaries', () => {
  it("NFR2: removes temporaries of dead processes, keeps live processes' and every other file", async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    const dead = deadPid();
    const names = {
      dead: `registry.json.tmp-${String(dead)}-0badc0de`,
      deadHuge: 'registry.json.tmp-2147483646-00000000',
      mine: `registry.json.tmp-${String(process.pid)}-12345678`,
      notAPid: 'registry.json.tmp-abc-12345678',
      other: 'other.json.tmp-1-12345678',
      target: 'registry.json',
      lock: 'registry.json.lock',
    };
    for (const name of Object.values(names)) await writeFile(join(folder, name), 'x');
    await atPath.removeStale(path);
    expect((await readdir(folder)).sort()).toEqual(
      [names.mine, names.other, names.target, names.lock].sort(),
    );
  });

  it('NFR2: a missing directory is nothing to clean', async () => {
    await expect(
      atPath.removeStale(join(cases.root(), 'no', 'such', 'dir', 'registry.json')),
    ).resolves.toBeUndefined();
  });
});

describe('isAlive', () => {
  it('EC1: this process is alive, a reaped child is not', () => {
    expect(isAlive(process.pid)).toBe(true);
    expect(isAlive(deadPid())).toBe(false);
  });

  it('EC1: a process this one may not signal (EPERM) still counts as alive', () => {
    // pid 1 always exists; unprivileged, signalling it is EPERM.
    expect(isAlive(1)).toBe(true);
  });
});
