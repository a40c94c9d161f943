// R7.18: where a write grant may go. The target is the narrowest directory holding the refused
// path (or the path itself when it exists); never the root, HOME or above it, a system directory,
// what a deny entry covers or holds, a directory with hand-off files, or Ahma's own code. Grants
// reach the session's commands (once: the next one), and "always" ones come back from the ledger.
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteGrants } from '../../src/sandbox/write-grants.js';
import { GrantLedger } from '../../src/state/grant-ledger.js';

let base: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp('/var/tmp/ahma-write-grants-'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const load = (options: { home?: string; code?: string; ledger?: GrantLedger } = {}) =>
  WriteGrants.load({
    scope: '/work/project',
    home: options.home ?? join(base, 'home'),
    denies: [
      {
        path: join(base, 'home', '.ssh'),
        except: [],
        list: 'the credentials deny list',
        why: 'keys',
      },
    ],
    code: options.code === undefined ? [] : [{ path: options.code, label: 'the server' }],
    ...(options.ledger === undefined ? {} : { ledger: options.ledger }),
  });

describe('WriteGrants', () => {
  it('R7.18: the target is the refused path when it exists, else the directory that would hold it', async () => {
    const grants = await load();
    await mkdir(join(base, 'out'));
    await writeFile(join(base, 'out', 'file.txt'), '');
    expect(await grants.target(join(base, 'out', 'new.txt'))).toEqual({ path: join(base, 'out') });
    expect(await grants.target(join(base, 'out', 'file.txt'))).toEqual({
      path: join(base, 'out', 'file.txt'),
    });
    expect(await grants.target(join(base, 'missing', 'x'))).toEqual({
      problem: `${join(base, 'missing')} does not exist`,
    });
  });

  it('R7.18: no grant for the root, HOME or above it, a system directory, a deny entry or what holds one, hand-off files, or Ahma’s code', async () => {
    const home = join(base, 'home');
    await mkdir(join(home, '.ssh'), { recursive: true });
    await mkdir(join(base, 'repo', '.git'), { recursive: true });
    await mkdir(join(base, 'code', 'dist'), { recursive: true });
    const grants = await load({ home, code: join(base, 'code', 'dist') });
    const problem = async (path: string) => {
      const target = await grants.target(path);
      return 'problem' in target ? target.problem : undefined;
    };
    expect(await problem('/x')).toBe('it is the filesystem root');
    expect(await problem(join(home, 'x'))).toBe('it is HOME or holds it');
    expect(await problem(join(base, 'x'))).toBe('it is HOME or holds it');
    expect(await problem('/etc/x')).toMatch(/system directory \(\/etc\)/);
    expect(await problem(join(home, '.ssh', 'id_x'))).toMatch(/lies in .*\.ssh/);
    expect(await problem(join(base, 'repo', 'x'))).toMatch(/holds or lies in .*repo\/\.git/);
    expect(await problem(join(base, 'repo', '.git', 'hooks-x'))).toMatch(/lies in .*\.git/);
    expect(await problem(join(base, 'code', 'x'))).toBe("Ahma's own code lies there");
  });

  it('R7.18: once reaches the next command of that session only; session all of its commands, no other session', async () => {
    const grants = await load();
    const dir = join(base, 'out');
    await mkdir(dir);
    await grants.grant('c1', dir, 'once', { who: 't', why: 't' });
    expect(grants.forCommand('c2')).toEqual([]);
    expect(grants.forCommand('c1')).toEqual([dir]);
    expect(grants.forCommand('c1')).toEqual([]);
    await grants.grant('c1', dir, 'session', { who: 't', why: 't' });
    expect(grants.forCommand('c1')).toEqual([dir]);
    expect(grants.forCommand('c1')).toEqual([dir]);
    grants.forget('c1');
    expect(grants.forCommand('c1')).toEqual([]);
  });

  it('R7.18: always reaches every session, is kept in the ledger, and comes back while it is still grantable', async () => {
    const ledger = new GrantLedger(await mkdtemp(join(base, 'state-')));
    const grants = await load({ ledger });
    const dir = join(base, 'out');
    await mkdir(dir);
    await grants.grant('c1', dir, 'always', { who: 'client', why: 'because' });
    expect(grants.forCommand('c9')).toEqual([dir]);
    expect(await ledger.forScope('/work/project', 'write')).toMatchObject([{ rule: dir }]);
    expect((await load({ ledger })).forCommand(undefined)).toEqual([dir]);
    await rm(dir, { recursive: true });
    expect((await load({ ledger })).forCommand(undefined)).toEqual([]);
  });
});
