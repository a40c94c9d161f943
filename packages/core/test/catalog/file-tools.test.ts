// The file tools run for real in the sandbox as argv commands (env PROGRAM ARGS…), never through a
// shell: file names with spaces, quotes and $(…) are plain names, and globs are not expanded.
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  catalog,
  catalogRunner,
  expectSuccess,
  type CallResult,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

/** A file name a shell would split, expand or execute. */
const ODD = 'odd $(touch pwned) name; "q" *.txt';

let loaded: Catalog;
let runner: CatalogRunner;
let count = 0;
/** This test's directory inside the scope, and the meta-parameter that runs calls there. */
let dir = '';
let at: { working_directory: string };

function lines(result: CallResult): string[] {
  return expectSuccess(result)
    .split('\n')
    .filter((line) => line !== '');
}

describe('file-tools, run for real in the sandbox', () => {
  beforeAll(async () => {
    loaded = await catalog(['file-tools']);
    runner = await catalogRunner(loaded, { ...process.env, LC_ALL: 'C' });
  });
  afterAll(async () => {
    await runner.dispose();
  });
  beforeEach(async () => {
    const name = `case-${String(++count)}`;
    dir = join(runner.scope, name);
    at = { working_directory: name };
    await mkdir(dir);
    await writeFile(join(dir, 'a.txt'), 'alpha\nbeta\ngamma\ndelta\n');
    await writeFile(join(dir, 'b.txt'), 'alpha\nBETA\ngamma\n');
    await writeFile(join(dir, ODD), 'odd content\n');
  });

  it('SPEC §2: every file tool is an argv command run through env, never a shell', async () => {
    const result = await runner.call('file-tools_cat', { paths: [ODD], ...at });
    expect(result.argv).toEqual(['env', 'cat', join(dir, ODD)]);
    expect(expectSuccess(result)).toBe('odd content\n');
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });

  it('R1.1: ls lists names as they are, options passed as real flags', async () => {
    expect(lines(await runner.call('file-tools_ls', { 'one-per-line': true, ...at }))).toEqual([
      'a.txt',
      'b.txt',
      ODD,
    ]);
    const long = lines(await runner.call('file-tools_ls', { long: true, paths: ['a.txt'], ...at }));
    expect(long[0]).toMatch(/^-rw.* 23 .*a\.txt$/);
  });

  it('R1.1: cat, head and tail print whole files, first lines and last lines', async () => {
    expect(
      expectSuccess(await runner.call('file-tools_cat', { number: true, paths: ['b.txt'], ...at })),
    ).toMatch(/^\s+1\talpha\n\s+2\tBETA\n\s+3\tgamma\n$/);
    expect(
      expectSuccess(await runner.call('file-tools_head', { lines: 2, paths: ['a.txt'], ...at })),
    ).toBe('alpha\nbeta\n');
    expect(
      expectSuccess(await runner.call('file-tools_tail', { lines: '1', paths: ['a.txt'], ...at })),
    ).toBe('delta\n');
    expect(
      expectSuccess(await runner.call('file-tools_tail', { lines: '+3', paths: ['a.txt'], ...at })),
    ).toBe('gamma\ndelta\n');
  });

  it('R1.1: grep searches with its pattern passed through -e; no match is exit status 1', async () => {
    expect(
      expectSuccess(
        await runner.call('file-tools_grep', {
          pattern: 'beta',
          'ignore-case': true,
          paths: ['a.txt', 'b.txt'],
          ...at,
        }),
      ),
    ).toBe(`${join(dir, 'a.txt')}:2:beta\n${join(dir, 'b.txt')}:2:BETA\n`);
    await writeFile(join(dir, 'c.txt'), '-v is not an option here\n');
    expect(
      expectSuccess(
        await runner.call('file-tools_grep', {
          pattern: '-v',
          'fixed-strings': true,
          paths: ['c.txt'],
          ...at,
        }),
      ),
    ).toBe('1:-v is not an option here\n');
    const recursive = await runner.call('file-tools_grep', {
      pattern: 'gamma',
      recursive: true,
      'files-with-matches': true,
      include: ['a.*'],
      ...at,
    });
    expect(lines(recursive)).toEqual(['a.txt']);
    const none = await runner.call('file-tools_grep', { pattern: 'zeta', paths: ['a.txt'], ...at });
    expect([none.status, none.exitCode, none.output]).toEqual(['failed', 1, '']);
  });

  it('R1.1: find takes its directories first and its tests under their real names', async () => {
    await mkdir(join(dir, 'sub', 'deeper'), { recursive: true });
    await writeFile(join(dir, 'sub', 'c.txt'), '');
    await writeFile(join(dir, 'sub', 'deeper', 'd.txt'), '');
    const all = await runner.call('file-tools_find', { '-type': 'f', '-name': '*.txt', ...at });
    expect(all.argv).toEqual(['env', 'find', dir, '-type', 'f', '-name', '*.txt']);
    expect(lines(all).sort()).toEqual(
      ['a.txt', 'b.txt', 'sub/c.txt', 'sub/deeper/d.txt', ODD].map((f) => join(dir, f)).sort(),
    );
    const shallow = await runner.call('file-tools_find', {
      paths: ['sub'],
      '-maxdepth': 1,
      '-type': 'f',
      ...at,
    });
    expect(lines(shallow)).toEqual([join(dir, 'sub', 'c.txt')]);
    const empty = await runner.call('file-tools_find', { '-empty': true, '-type': 'f', ...at });
    expect(lines(empty).sort()).toEqual([
      join(dir, 'sub', 'c.txt'),
      join(dir, 'sub', 'deeper', 'd.txt'),
    ]);
  });

  it('R1.1: mkdir, touch, cp, mv and rm change the file system as the programs do', async () => {
    expectSuccess(
      await runner.call('file-tools_mkdir', { parents: true, paths: ['x/y/z'], ...at }),
    );
    expect((await stat(join(dir, 'x', 'y', 'z'))).isDirectory()).toBe(true);

    expectSuccess(await runner.call('file-tools_touch', { paths: ['x/new file.txt'], ...at }));
    expect(await readFile(join(dir, 'x', 'new file.txt'), 'utf8')).toBe('');
    expectSuccess(
      await runner.call('file-tools_touch', {
        date: '2001-02-03 04:05:06',
        paths: ['a.txt'],
        ...at,
      }),
    );
    expect((await stat(join(dir, 'a.txt'))).mtime.getFullYear()).toBe(2001);

    expectSuccess(
      await runner.call('file-tools_cp', { source: 'a.txt', destination: 'x/copy.txt', ...at }),
    );
    expect(await readFile(join(dir, 'x', 'copy.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\ndelta\n');
    expectSuccess(
      await runner.call('file-tools_cp', {
        recursive: true,
        source: 'x',
        destination: 'x2',
        ...at,
      }),
    );
    expect(existsSync(join(dir, 'x2', 'y', 'z'))).toBe(true);

    expectSuccess(
      await runner.call('file-tools_mv', { source: ODD, destination: 'plain.txt', ...at }),
    );
    expect(existsSync(join(dir, ODD))).toBe(false);
    expect(await readFile(join(dir, 'plain.txt'), 'utf8')).toBe('odd content\n');
    const clobber = await runner.call('file-tools_mv', {
      'no-clobber': true,
      source: 'b.txt',
      destination: 'a.txt',
      ...at,
    });
    expect(clobber.status === 'completed' || clobber.exitCode === 1).toBe(true);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\ndelta\n');

    expectSuccess(await runner.call('file-tools_rm', { paths: ['plain.txt'], ...at }));
    expect(existsSync(join(dir, 'plain.txt'))).toBe(false);
    const refused = await runner.call('file-tools_rm', { paths: ['x2'], ...at });
    expect(refused.status).toBe('failed');
    expect(existsSync(join(dir, 'x2'))).toBe(true);
    expectSuccess(await runner.call('file-tools_rm', { recursive: true, paths: ['x2'], ...at }));
    expect(existsSync(join(dir, 'x2'))).toBe(false);
  });

  it('SPEC §3: diff prints a unified diff by default; differing inputs are exit status 1', async () => {
    const result = await runner.call('file-tools_diff', { from: 'a.txt', to: 'b.txt', ...at });
    expect([result.status, result.exitCode]).toEqual(['failed', 1]);
    expect(result.output).toContain(`--- ${join(dir, 'a.txt')}`);
    expect(result.output).toContain('\n-beta\n+BETA\n');
    expect(result.output).toContain('\n-delta\n');
    const same = await runner.call('file-tools_diff', {
      'ignore-case': true,
      from: 'b.txt',
      to: 'b.txt',
      ...at,
    });
    expect(expectSuccess(same)).toBe('');
  });

  it('R1.1: wc counts lines, words and bytes', async () => {
    const counts = expectSuccess(
      await runner.call('file-tools_wc', { lines: true, paths: ['a.txt', 'b.txt'], ...at }),
    );
    expect(
      counts
        .trim()
        .split('\n')
        .map((line) => line.trim().split(/\s+/)[0]),
    ).toEqual(['4', '3', '7']);
    const all = expectSuccess(await runner.call('file-tools_wc', { paths: ['b.txt'], ...at }));
    expect(all.trim().split(/\s+/).slice(0, 3)).toEqual(['3', '3', '17']);
  });

  it('R7.1: paths outside the scope are refused before anything runs', async () => {
    await expect(
      runner.call('file-tools_rm', { paths: ['/etc/hostname'], ...at }),
    ).rejects.toMatchObject({
      code: 'PATH_OUTSIDE_SCOPE',
    });
    await expect(
      runner.call('file-tools_cp', { source: 'a.txt', destination: '../../../elsewhere', ...at }),
    ).rejects.toMatchObject({ code: 'PATH_OUTSIDE_SCOPE' });
  });
});
