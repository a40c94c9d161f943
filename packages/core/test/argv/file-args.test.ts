import { mkdtemp, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileArgWriter } from '../../src/argv/file-args.js';
import { AhmaError } from '../../src/errors.js';

let tempRoot = '';

beforeEach(async () => {
  tempRoot = await realpath(await mkdtemp(join(tmpdir(), 'ahma-file-args-')));
});

afterEach(async () => {
  await rm(tempRoot, { recursive: true, force: true });
});

describe('createFileArgWriter', () => {
  it('SPEC §2 file_arg: the value is written verbatim to a file under tempRoot and its path returned', async () => {
    const writer = createFileArgWriter(tempRoot);
    const value = 'feat: subject\n\nbody with $(id) `id` ; rm -rf ~ and 🚀\n';
    const path = await writer.write('message', value);
    expect(dirname(dirname(path))).toBe(tempRoot);
    expect(basename(dirname(path))).toMatch(/^ahma-args-/);
    expect(await readFile(path, 'utf8')).toBe(value);
    await writer.cleanup();
  });

  it('SPEC §2 file_arg: the file is private (mode 0600) inside a private directory (0700)', async () => {
    const writer = createFileArgWriter(tempRoot);
    const path = await writer.write('message', 'secret');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(path))).mode & 0o777).toBe(0o700);
    await writer.cleanup();
  });

  it('SPEC §2 file_arg: empty and 1 MiB values are written byte-identical', async () => {
    const writer = createFileArgWriter(tempRoot);
    const big = 'é'.repeat(512 * 1024);
    const empty = await writer.write('empty', '');
    const large = await writer.write('large', big);
    expect(await readFile(empty, 'utf8')).toBe('');
    expect((await readFile(large)).equals(Buffer.from(big, 'utf8'))).toBe(true);
    expect((await stat(large)).size).toBe(1024 * 1024);
    await writer.cleanup();
  });

  it('SPEC §2 file_arg: every write gets its own file, concurrent ones too, in one directory', async () => {
    const writer = createFileArgWriter(tempRoot);
    const paths = await Promise.all(
      ['a', 'b', 'c', 'd'].map((value) => writer.write('message', value)),
    );
    expect(new Set(paths).size).toBe(4);
    expect(new Set(paths.map((path) => dirname(path))).size).toBe(1);
    expect(await Promise.all(paths.map((path) => readFile(path, 'utf8')))).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(await readdir(tempRoot)).toHaveLength(1);
    await writer.cleanup();
  });

  it('SPEC §2 file_arg: an argument name cannot steer the file out of its directory', async () => {
    const writer = createFileArgWriter(tempRoot);
    const path = await writer.write('../../../etc/passwd', 'x');
    expect(dirname(dirname(path))).toBe(tempRoot);
    expect(basename(path)).not.toContain('/');
    expect(basename(path)).toMatch(/^\d+-[A-Za-z0-9_.-]+$/);
    await writer.cleanup();
  });

  it('SPEC §2 file_arg: cleanup() removes every file and the directory, and is safe to repeat', async () => {
    const writer = createFileArgWriter(tempRoot);
    const first = await writer.write('a', '1');
    const second = await writer.write('b', '2');
    await writer.cleanup();
    await expect(stat(first)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(second)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(tempRoot)).toEqual([]);
    await writer.cleanup();
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: cleanup() without any write creates and removes nothing', async () => {
    const writer = createFileArgWriter(tempRoot);
    await writer.cleanup();
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: the writer is usable again after cleanup()', async () => {
    const writer = createFileArgWriter(tempRoot);
    await writer.write('a', '1');
    await writer.cleanup();
    const again = await writer.write('a', '2');
    expect(await readFile(again, 'utf8')).toBe('2');
    await writer.cleanup();
    expect(await readdir(tempRoot)).toEqual([]);
  });

  it('SPEC §2 file_arg: without tempRoot the OS temp directory is used', async () => {
    const writer = createFileArgWriter();
    const path = await writer.write('m', 'v');
    try {
      expect(dirname(dirname(path))).toBe(tmpdir());
      expect(await readFile(path, 'utf8')).toBe('v');
    } finally {
      await writer.cleanup();
    }
    await expect(stat(dirname(path))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('SPEC §2 file_arg: an unusable tempRoot gives FILE_ARG_FAILED naming the argument; cleanup() still succeeds', async () => {
    const writer = createFileArgWriter(join(tempRoot, 'missing', 'dir'));
    const error: unknown = await writer.write('message', 'x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AhmaError);
    expect((error as AhmaError).code).toBe('FILE_ARG_FAILED');
    expect((error as AhmaError).message).toContain('argument "message"');
    await expect(writer.cleanup()).resolves.toBeUndefined();
    await expect(writer.cleanup()).resolves.toBeUndefined();
  });
});
