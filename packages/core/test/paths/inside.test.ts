// R7.1: the one containment check every security decision uses (paths/inside.ts), on the edge cases
// where hand-written checks used to disagree.
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realpathLenient } from '../../src/argv/paths.js';
import { isInside, overlaps, overlapsWith } from '../../src/paths/inside.js';

describe('isInside', () => {
  it.each([
    // [path, dir, inside, why]
    ['/a/b', '/a/b', true, 'the directory itself'],
    ['/a/b/c', '/a/b', true, 'a child'],
    ['/a/b/c/d', '/a/b', true, 'a grandchild'],
    ['/a/b/..x', '/a/b', true, 'a child named ..x (not a parent reference)'],
    ['/a/b/..', '/a/b', false, '.. is the parent'],
    ['/a/b/../c', '/a/b', false, 'through .. to a sibling'],
    ['/a/b/./c', '/a/b', true, 'a . segment'],
    ['/a/b/', '/a/b', true, 'the directory with a trailing /'],
    ['/a/b', '/a/b/', true, 'against a directory with a trailing /'],
    ['/a/b/c/', '/a/b/', true, 'both with trailing /'],
    ['/a/bc', '/a/b', false, 'a sibling sharing the name as a prefix'],
    ['/a/b-evil/x', '/a/b', false, 'a sibling with a suffix'],
    ['/a/b.', '/a/b', false, 'a sibling ending in a dot'],
    ['/a', '/a/b', false, 'the parent'],
    ['/x/a/b', '/a/b', false, 'the same names elsewhere'],
    ['/A/b', '/a/b', false, 'another case is another name'],
    ['/a/B', '/a/b', false, 'another case is another name (last segment)'],
    ['/', '/a/b', false, '/ is inside nothing but itself'],
    ['/', '/', true, '/ itself'],
    ['/anything/at/all', '/', true, 'everything is inside /'],
    ['//a//b//c', '/a/b', true, 'doubled separators'],
  ])('R7.1: isInside(%j, %j) is %s (%s)', (path, dir, inside) => {
    expect(isInside(path, dir)).toBe(inside);
  });

  it('R7.1: agrees with the definition through path.relative on 20,000 random spellings', () => {
    const segments = ['a', 'b', 'A', '..', '.', '..x', 'b.', '', 'bc'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const spelling = () =>
      `/${Array.from({ length: random(5) }, () => segments[random(segments.length)]).join('/')}`;
    const byRelative = (path: string, dir: string) => {
      const rest = relative(resolve(dir), resolve(path));
      return rest === '' || (rest !== '..' && !rest.startsWith('../') && !isAbsolute(rest));
    };
    for (let index = 0; index < 20_000; index += 1) {
      const [path, dir] = [spelling(), spelling()];
      expect(isInside(path, dir), `isInside(${path}, ${dir})`).toBe(byRelative(path, dir));
    }
  });

  it('R7.1: overlaps is containment either way', () => {
    expect(overlaps('/a/b', '/a/b/c')).toBe(true);
    expect(overlaps('/a/b/c', '/a/b')).toBe(true);
    expect(overlaps('/a/b', '/a/bc')).toBe(false);
  });

  it('R7.1: overlapsWith finds the first entry overlaps finds, on 5,000 random spellings', () => {
    const segments = ['a', 'b', '..', '.', '..x', '', 'bc'];
    let seed = 11;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % n; // the high bits: the low ones of this generator repeat soon
    };
    const spelling = () =>
      `/${Array.from({ length: random(4) }, () => segments[random(segments.length)]).join('/')}`;
    // Not `/` itself (every path overlaps it), nor a spelling of it.
    const entries = Array.from({ length: 40 }, (_, index) => ({ path: spelling(), index }))
      .filter((entry) => resolve(entry.path) !== '/')
      .slice(0, 8);
    const clashOf = overlapsWith(entries);
    let found = 0;
    for (let index = 0; index < 5_000; index += 1) {
      const path = spelling();
      const expected = entries.find((entry) => overlaps(path, entry.path));
      expect(clashOf(path), `overlapsWith(${path})`).toBe(expected);
      if (expected !== undefined) found += 1;
    }
    expect(found).toBeGreaterThan(500); // the spellings do overlap, often
    expect(found).toBeLessThan(4_500); // and often do not
  });
});

describe('isInside on real paths: symlinked parents', () => {
  let root = '';
  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'ahma-inside-')));
    await mkdir(join(root, 'scope'));
    await mkdir(join(root, 'outside'));
    // scope/link → ../outside: scope/link/file is spelled inside the scope but lies outside.
    await symlink(join(root, 'outside'), join(root, 'scope', 'link'));
    // alias → scope: alias/file is spelled outside the scope but lies inside.
    await symlink(join(root, 'scope'), join(root, 'alias'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('R7.1: the check is lexical; what a symlinked parent hides shows once the path is resolved', async () => {
    const scope = join(root, 'scope');
    const throughLink = join(scope, 'link', 'file');
    expect(isInside(throughLink, scope)).toBe(true); // as spelled
    expect(isInside(await realpathLenient(throughLink), scope)).toBe(false); // as it really is
    const throughAlias = join(root, 'alias', 'file');
    expect(isInside(throughAlias, scope)).toBe(false);
    expect(isInside(await realpathLenient(throughAlias), scope)).toBe(true);
  });
});
