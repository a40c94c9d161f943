// readRegularFile (R7.6, FR4.7): the server opens for reading only what is a regular file. Anything
// else (a device, a FIFO, a socket, a directory, a symlink to one) is refused WITHOUT being opened:
// opening /dev/ptmx allocates a terminal (a new /dev/pts/N), opening a FIFO with no writer could
// block, so those are what the tests watch for.
import { execFile } from 'node:child_process';
import { readdirSync, readlinkSync, watch } from 'node:fs';
import { readdir, symlink, truncate, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  NotRegularFileError,
  readRegularFile,
  readRegularFileSync,
} from '../../src/paths/read-regular.js';
import { caseDirs } from '../registry/helpers.js';

const run = promisify(execFile);
const cases = caseDirs('read-regular');
const LINUX = process.platform === 'linux';
const PTYS = LINUX && readdirSync('/dev').includes('ptmx') && readdirSync('/dev').includes('pts');

/** What the server's descriptors point at (none may be left on a file it refused or read). */
function openTargets(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

/**
 * Runs `work` while watching /dev/pts: every terminal allocated meanwhile (anyone opening /dev/ptmx)
 * creates an entry there, which inotify reports even when it is gone again by the time we look.
 */
async function ptysAllocatedDuring(work: () => Promise<unknown>): Promise<string[]> {
  const events: string[] = [];
  const before = await readdir('/dev/pts');
  const watcher = watch('/dev/pts', (event, name) => events.push(`${event} ${String(name)}`));
  try {
    await new Promise((resolve) => setTimeout(resolve, 20));
    await work();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    watcher.close();
  }
  const after = await readdir('/dev/pts');
  return [...events, ...after.filter((name) => !before.includes(name)).map((n) => `new ${n}`)];
}

async function refusal(path: string, maxBytes = 1024): Promise<NotRegularFileError> {
  const started = Date.now();
  const error: unknown = await readRegularFile(path, maxBytes).then(
    (text) => new Error(`read ${String(text.length)} characters`),
    (failure: unknown) => failure,
  );
  expect(Date.now() - started, 'answered promptly').toBeLessThan(2000);
  expect(error).toBeInstanceOf(NotRegularFileError);
  return error as NotRegularFileError;
}

describe('readRegularFile: regular files', () => {
  it('R7.6: a regular file is read whole, and no descriptor is left on it', async () => {
    const path = join(await cases.dir(), 'commands.yaml');
    await writeFile(path, 'commands:\n  é: {exec: wc}\n');
    expect(await readRegularFile(path, 1024)).toBe('commands:\n  é: {exec: wc}\n');
    expect(openTargets()).not.toContain(path);
  });

  it('R7.6: a symlink to a regular file is followed, and an empty file reads as empty', async () => {
    const dir = await cases.dir();
    await writeFile(join(dir, 'real.yaml'), 'x: 1\n');
    await writeFile(join(dir, 'empty.yaml'), '');
    await symlink(join(dir, 'real.yaml'), join(dir, 'link.yaml'));
    expect(await readRegularFile(join(dir, 'link.yaml'), 1024)).toBe('x: 1\n');
    expect(await readRegularFile(join(dir, 'empty.yaml'), 1024)).toBe('');
  });

  it('R7.6: a missing path, or one in a missing directory, passes through as ENOENT', async () => {
    const dir = await cases.dir();
    await expect(readRegularFile(join(dir, 'missing.yaml'), 1024)).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(readRegularFile(join(dir, 'missing', 'x.yaml'), 1024)).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('FR4.7: a file over the limit is refused, before it is opened when its size says so', async () => {
    const dir = await cases.dir();
    const exact = join(dir, 'exact.yaml');
    await writeFile(exact, 'a'.repeat(100));
    expect(await readRegularFile(exact, 100)).toHaveLength(100);
    const over = join(dir, 'over.yaml');
    await writeFile(over, '');
    await truncate(over, 101);
    expect((await refusal(over, 100)).message).toBe('larger than 100 bytes');
    expect(openTargets()).not.toContain(over);
  });

  it.runIf(LINUX)(
    'R7.6: a file that says it is empty but reads forever (/proc) is read no further than the limit',
    async () => {
      // (pagemap is read in 8-byte entries: the limit leaves the read buffer at 64 KiB.)
      expect((await refusal('/proc/self/pagemap', 1 << 20)).message).toBe(
        `larger than ${String(1 << 20)} bytes`,
      );
    },
  );
});

describe('readRegularFile: what is not a regular file is refused unopened', () => {
  it('R7.6: a directory', async () => {
    const dir = await cases.dir();
    expect((await refusal(dir)).message).toBe('it is a directory, not a regular file');
  });

  it('R7.6: a FIFO without a writer is refused at once (nothing blocks on it)', async () => {
    const fifo = join(await cases.dir(), 'pipe.yaml');
    await run('mkfifo', [fifo]);
    expect((await refusal(fifo)).message).toBe('it is a FIFO (named pipe), not a regular file');
    expect(openTargets()).not.toContain(fifo);
  });

  it('R7.6: a unix socket', async () => {
    const path = join(await cases.dir(), 'sock.yaml');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      expect((await refusal(path)).message).toBe('it is a socket, not a regular file');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it.runIf(LINUX)('R7.6: /dev/null is a character device, not a regular file', async () => {
    expect((await refusal('/dev/null')).message).toBe(
      'it is a character device, not a regular file',
    );
  });

  it.runIf(PTYS)(
    'R7.6: /dev/ptmx is refused and never opened: no terminal is allocated (/dev/pts unchanged)',
    async () => {
      let message = '';
      const allocated = await ptysAllocatedDuring(async () => {
        message = (await refusal('/dev/ptmx')).message;
      });
      expect(allocated).toEqual([]);
      expect(message).toBe('it is a character device, not a regular file');
    },
  );

  it.runIf(PTYS)(
    'R7.6: a symlink to /dev/ptmx is refused, and /dev/ptmx is never opened through it',
    async () => {
      const dir = await cases.dir();
      await mkdir(join(dir, 'sub'));
      await symlink('/dev/ptmx', join(dir, 'sub', 'commands.yaml'));
      await symlink(join(dir, 'sub', 'commands.yaml'), join(dir, 'chain.yaml'));
      let messages: string[] = [];
      const allocated = await ptysAllocatedDuring(async () => {
        messages = [
          (await refusal(join(dir, 'sub', 'commands.yaml'))).message,
          (await refusal(join(dir, 'chain.yaml'))).message,
        ];
      });
      expect(allocated).toEqual([]);
      expect(messages).toEqual([
        'it is a character device, not a regular file',
        'it is a character device, not a regular file',
      ]);
    },
  );

  it.runIf(PTYS)(
    'R7.6: the watch itself works: opening /dev/ptmx for real is seen (the check above can fail)',
    async () => {
      const { open } = await import('node:fs/promises');
      const allocated = await ptysAllocatedDuring(async () => {
        const terminal = await open('/dev/ptmx', 'r+');
        await terminal.close();
      });
      expect(allocated.length).toBeGreaterThan(0);
    },
  );
});

describe('readRegularFileSync: the same refusals for a synchronous caller', () => {
  it('R7.6: a regular file is read whole; a FIFO, a directory and /dev/null are refused unopened, at once', async () => {
    const dir = await cases.dir();
    const file = join(dir, 'commondir');
    await writeFile(file, '../..\n');
    expect(readRegularFileSync(file, 4096)).toBe('../..\n');
    const fifo = join(dir, 'gitdir-fifo');
    await run('mkfifo', [fifo]);
    expect(() => readRegularFileSync(fifo, 4096)).toThrow(
      new NotRegularFileError('it is a FIFO (named pipe), not a regular file'),
    );
    expect(() => readRegularFileSync(dir, 4096)).toThrow(/it is a directory/);
    if (LINUX) expect(() => readRegularFileSync('/dev/null', 4096)).toThrow(/character device/);
    expect(() => readRegularFileSync(file, 3)).toThrow(/larger than 3 bytes/);
    expect(openTargets()).not.toContain(fifo);
    expect(openTargets()).not.toContain(file);
  });
});
