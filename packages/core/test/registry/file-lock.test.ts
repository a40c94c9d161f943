// withFileLock (EC1): one change at a time across processes sharing a registry file, through a
// lock file holding the owner's pid. A lock whose owner is gone is taken over; one held by a live
// process is waited for, up to a limit. Real processes: children run the lock's own source.
import { spawn } from 'node:child_process';
import { chmod, mkdir, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  atPath,
  atPathSource,
  caseDirs,
  type Child,
  deadPid,
  refusal,
  startNode,
  transpiledSources,
} from './helpers.js';

const cases = caseDirs('file-lock');
/** The path-based lock over file-lock.ts transpiled, for child processes. */
let lockModule = '';

beforeAll(async () => {
  const modules = await transpiledSources(await dir(), [
    'errors.ts',
    'registry/write-atomic.ts',
    'paths/read-regular.ts',
    'registry/pinned-directory.ts',
    'registry/file-lock.ts',
  ]);
  lockModule = atPathSource({
    pinned: modules['registry/pinned-directory.ts'] ?? '',
    lock: modules['registry/file-lock.ts'] ?? '',
  });
});

const dir = cases.dir;

/** A live process that is not this one: `sleep`, killed by the caller. */
function liveProcess(): { pid: number; kill: () => void } {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const pid = child.pid;
  if (pid === undefined) throw new Error('sleep did not start');
  return { pid, kill: () => child.kill('SIGKILL') };
}

/** A child process that takes the lock with file-lock.ts and runs `work` (a JS body) under it. */
function lockingChild(path: string, work: string): Child {
  return startNode(
    [
      lockModule,
      "import { readFile, writeFile } from 'node:fs/promises';",
      "import { setTimeout as sleep } from 'node:timers/promises';",
      `const path = ${JSON.stringify(path)};`,
      work,
    ].join('\n'),
  );
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(5);
  }
}

const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

describe('withFileLock: one holder', () => {
  it('EC1: runs the work and resolves to its result; the lock file holds this pid meanwhile and is gone after', async () => {
    const path = join(await dir(), 'registry.json');
    const result = await atPath.lock(path, async () => {
      expect((await readFile(`${path}.lock`, 'utf8')).split(' ')[0]).toBe(String(process.pid));
      return 42;
    });
    expect(result).toBe(42);
    expect(await exists(`${path}.lock`)).toBe(false);
  });

  it("EC1: the lock is released when the work throws, and the error is the work's", async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    await expect(atPath.lock(path, () => Promise.reject(new Error('work failed')))).rejects.toThrow(
      'work failed',
    );
    expect(await readdir(folder)).toEqual([]);
  });

  it('EC1: the directory of the file is created when missing', async () => {
    const path = join(await dir(), 'a', 'b', 'registry.json');
    await expect(atPath.lock(path, () => Promise.resolve('ok'))).resolves.toBe('ok');
  });

  it("EC1: a directory a command put at the lock's name is moved aside (rm would refuse it), and the lock is taken", async () => {
    const folder = await dir();
    await mkdir(join(folder, 'registry.json.lock', 'inner'), { recursive: true });
    await expect(
      atPath.lock(join(folder, 'registry.json'), () => Promise.resolve('ran')),
    ).resolves.toBe('ran');
    const names = await readdir(folder);
    expect(names.filter((n) => n.startsWith('registry.json.lock.stale-'))).toHaveLength(1);
    expect(names).not.toContain('registry.json.lock');
  });

  it('EC1: releasing removes only the lock this process made: one put in its place meanwhile stays', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    await atPath.lock(path, async () => {
      await rm(`${path}.lock`);
      await writeFile(`${path}.lock`, '1');
    });
    expect(await readFile(`${path}.lock`, 'utf8')).toBe('1');
  });

  it.skipIf(process.getuid?.() === 0)(
    'EC1: a lock in a read-only directory is REGISTRY_WRITE_FAILED (skipped as root: root ignores permissions)',
    async () => {
      const folder = await dir();
      await chmod(folder, 0o555);
      try {
        await refusal(
          atPath.lock(join(folder, 'registry.json'), () => Promise.resolve()),
          'REGISTRY_WRITE_FAILED',
          'the change was not made: cannot lock the registry file',
        );
      } finally {
        await chmod(folder, 0o755);
      }
    },
  );
});

describe('withFileLock: waiting and taking over', () => {
  it('EC1: concurrent holders in one process never overlap, and every one runs', async () => {
    const path = join(await dir(), 'registry.json');
    let active = 0;
    let most = 0;
    const ran: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        atPath.lock(path, async () => {
          active++;
          most = Math.max(most, active);
          await sleep(5);
          ran.push(i);
          active--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(ran.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('EC1: processes incrementing a shared counter under the lock lose no increment', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    const count = join(folder, 'count');
    await writeFile(count, '0');
    // Read, pause, write: without the lock, increments overlapping in time would be lost.
    const increment = [
      `const count = ${JSON.stringify(count)};`,
      'for (let i = 0; i < 15; i++) {',
      '  await withFileLock(path, async () => {',
      "    const n = Number(await readFile(count, 'utf8'));",
      '    await sleep(2);',
      '    await writeFile(count, String(n + 1));',
      '  });',
      '}',
    ].join('\n');
    const children = [lockingChild(path, increment), lockingChild(path, increment)];
    for (let i = 0; i < 15; i++) {
      await atPath.lock(path, async () => {
        const n = Number(await readFile(count, 'utf8'));
        await sleep(2);
        await writeFile(count, String(n + 1));
      });
    }
    for (const child of children) {
      const result = await child.done;
      expect(result.code, result.stderr).toBe(0);
    }
    expect(await readFile(count, 'utf8')).toBe('45');
    expect(await readdir(folder)).toEqual(['count']);
  });

  it('EC1: a lock held by another live process is waited for until it is released', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    const marker = join(folder, 'child-done');
    const child = lockingChild(
      path,
      [
        `const marker = ${JSON.stringify(marker)};`,
        'await withFileLock(path, async () => {',
        "  await writeFile(path + '.held', '');",
        '  await sleep(300);',
        "  await writeFile(marker, 'done');",
        '});',
      ].join('\n'),
    );
    await waitFor(() => exists(`${path}.held`));
    expect((await readFile(`${path}.lock`, 'utf8')).split(' ')[0]).toBe(String(child.pid));
    await atPath.lock(path, async () => {
      // The child's work finished before this one started.
      expect(await readFile(marker, 'utf8')).toBe('done');
    });
    expect((await child.done).code).toBe(0);
  });

  it('EC1: a lock held by a live process past the time limit is REGISTRY_WRITE_FAILED naming it; the lock stays', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    const holder = liveProcess();
    try {
      await writeFile(`${path}.lock`, String(holder.pid));
      let ran = false;
      const started = Date.now();
      const error = await refusal(
        atPath.lock(
          path,
          () => {
            ran = true;
            return Promise.resolve();
          },
          150,
        ),
        'REGISTRY_WRITE_FAILED',
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      expect(ran).toBe(false);
      expect(error.message).toBe(
        `the registry file ${path} stays locked by process ${String(holder.pid)}; if that process is not an Ahma server, remove ${path}.lock`,
      );
      expect(await readFile(`${path}.lock`, 'utf8')).toBe(String(holder.pid));
    } finally {
      holder.kill();
    }
  });

  it('EC1: a lock released by its live holder while waiting is taken', async () => {
    const path = join(await dir(), 'registry.json');
    const holder = liveProcess();
    try {
      await writeFile(`${path}.lock`, String(holder.pid));
      setTimeout(() => void rm(`${path}.lock`, { force: true }), 100);
      await expect(atPath.lock(path, () => Promise.resolve('got it'), 5000)).resolves.toBe(
        'got it',
      );
    } finally {
      holder.kill();
    }
  });

  it('EC1: a stale lock file with a dead pid is taken over at once', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    await writeFile(`${path}.lock`, String(deadPid()));
    const started = Date.now();
    await atPath.lock(
      path,
      async () => {
        expect((await readFile(`${path}.lock`, 'utf8')).split(' ')[0]).toBe(String(process.pid));
      },
      100,
    );
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await readdir(folder)).toEqual([]);
  });

  it('EC1: the lock of a holder killed mid-change (SIGKILL) is taken over', async () => {
    const folder = await dir();
    const path = join(folder, 'registry.json');
    const child = lockingChild(
      path,
      "await withFileLock(path, async () => { await writeFile(path + '.held', ''); await sleep(60_000); });",
    );
    await waitFor(() => exists(`${path}.held`));
    child.kill('SIGKILL');
    expect((await child.done).signal).toBe('SIGKILL');
    expect((await readFile(`${path}.lock`, 'utf8')).split(' ')[0]).toBe(String(child.pid));
    await expect(atPath.lock(path, () => Promise.resolve('taken'), 2000)).resolves.toBe('taken');
  });

  it('EC1: an empty lock file (its writer between create and write) is waited for while fresh', async () => {
    const path = join(await dir(), 'registry.json');
    await writeFile(`${path}.lock`, '');
    await refusal(
      atPath.lock(path, () => Promise.resolve(), 100),
      'REGISTRY_WRITE_FAILED',
      'stays locked',
    );
  });

  it('EC1: an empty or unreadable lock file older than a second is stale, and taken over', async () => {
    for (const content of ['', 'not a pid', '-5']) {
      const path = join(await dir(), 'registry.json');
      await writeFile(`${path}.lock`, content);
      const old = new Date(Date.now() - 5000);
      await utimes(`${path}.lock`, old, old);
      await expect(atPath.lock(path, () => Promise.resolve(content), 100)).resolves.toBe(content);
    }
  });
});
