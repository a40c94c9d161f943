// The read policy (R7.10): the cover of every grant minus the denies, computed on a real tree, and
// the helper enforcing it for real (--read / --list rules, Landlock).
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  coverRules,
  deniedBy,
  shippedDenies,
  SYSTEM_READ,
  type DenyEntry,
  type ReadPolicy,
  type Rule,
} from '../../src/sandbox/read-policy.js';
import { buildHelperIfStale, helper } from '../support/sandbox-helper.js';

const run = promisify(execFile);

let root = '';
let home = '';
let scope = '';

const deny = (path: string, except: string[] = []): DenyEntry => ({
  path,
  except,
  list: 'a test list',
  why: 'a secret',
});

const accessOf = (rules: readonly Rule[], path: string) =>
  rules.find((rule) => rule.path === path)?.access;

beforeAll(async () => {
  // Under /var/tmp: /tmp is writable (and so readable) by design.
  root = await mkdtemp('/var/tmp/ahma-read-policy-');
  home = join(root, 'home');
  scope = join(root, 'scope');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await mkdir(join(home, '.aws'), { recursive: true });
  await mkdir(join(home, '.config', 'gh'), { recursive: true });
  await mkdir(join(home, '.config', 'editor'), { recursive: true });
  await mkdir(join(home, 'dotfiles', 'ssh'), { recursive: true });
  await mkdir(scope, { recursive: true });
  await writeFile(join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
  await writeFile(join(home, '.ssh', 'id_ed25519.pub'), 'ssh-ed25519 AAAA\n');
  await writeFile(join(home, '.ssh', 'known_hosts'), 'example.org ssh-ed25519 AAAA\n');
  await writeFile(join(home, '.ssh', 'config'), 'Host example\n');
  await writeFile(join(home, '.aws', 'credentials'), 'AWS SECRET\n');
  await writeFile(join(home, '.config', 'gh', 'hosts.yml'), 'GH TOKEN\n');
  await writeFile(join(home, '.config', 'editor', 'settings'), 'tabs\n');
  await writeFile(join(home, '.bashrc'), 'alias ll=ls\n');
  await writeFile(join(home, 'dotfiles', 'ssh', 'id_rsa'), 'ANOTHER KEY\n');
  // Links: one straight at a key, one making a denied path lead elsewhere.
  await symlink(join(home, '.ssh', 'id_ed25519'), join(home, 'key-link'));
  await symlink(join(home, 'dotfiles', 'ssh'), join(home, '.ssh-old'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const policy = (denies: DenyEntry[]): ReadPolicy => ({
  grants: [
    { path: '/', access: 'list' },
    ...SYSTEM_READ.map((path) => ({ path, access: 'read' as const })),
    { path: home, access: 'read' },
    { path: scope, access: 'write' },
  ],
  denies,
});

const sshDeny = () => deny(join(home, '.ssh', '*'), ['known_hosts', 'config', '*.pub']);

describe('R7.10: the cover of the read policy', () => {
  it('R7.10: HOME is split around denied entries: listed on the way, read elsewhere, denied entries absent', () => {
    const rules = coverRules(policy([sshDeny(), deny(join(home, '.aws'))]));
    expect(accessOf(rules, home)).toBe('list');
    expect(accessOf(rules, join(home, '.ssh'))).toBe('list');
    expect(accessOf(rules, join(home, '.ssh', 'known_hosts'))).toBe('read');
    expect(accessOf(rules, join(home, '.ssh', 'config'))).toBe('read');
    expect(accessOf(rules, join(home, '.ssh', 'id_ed25519.pub'))).toBe('read');
    expect(accessOf(rules, join(home, '.ssh', 'id_ed25519'))).toBeUndefined();
    expect(accessOf(rules, join(home, '.aws'))).toBeUndefined();
    expect(accessOf(rules, join(home, '.config'))).toBe('read');
    expect(accessOf(rules, join(home, '.bashrc'))).toBe('read');
    expect(accessOf(rules, scope)).toBe('write');
    // No rule lies beneath a denied path.
    for (const rule of rules) {
      expect(rule.path.startsWith(join(home, '.aws'))).toBe(false);
      expect(rule.path).not.toBe(join(home, '.ssh', 'id_ed25519'));
    }
  });

  it('R7.10: a deny three levels beneath a grant splits each directory on the way, and only those', () => {
    const rules = coverRules({
      grants: [{ path: root, access: 'read' }],
      denies: [deny(join(home, '.config', 'gh'))],
    });
    expect(accessOf(rules, root)).toBe('list');
    expect(accessOf(rules, home)).toBe('list');
    expect(accessOf(rules, join(home, '.config'))).toBe('list');
    expect(accessOf(rules, join(home, '.config', 'editor'))).toBe('read');
    expect(accessOf(rules, join(home, '.config', 'gh'))).toBeUndefined();
    // Beside the way down: granted whole, not entered.
    expect(accessOf(rules, scope)).toBe('read');
    expect(accessOf(rules, join(home, '.ssh'))).toBe('read');
    expect(accessOf(rules, join(home, '.ssh', 'id_ed25519'))).toBeUndefined();
    expect(accessOf(rules, join(home, '.bashrc'))).toBe('read');
    // Links are never rules of their own.
    expect(accessOf(rules, join(home, 'key-link'))).toBeUndefined();
    expect(accessOf(rules, join(home, '.ssh-old'))).toBeUndefined();
    expect(rules).toHaveLength(
      new Set(rules.map((rule) => rule.path)).size, // one rule per path
    );
  });

  it('R7.10: a link is never granted itself: one at a key grants nothing, and a deny applies at its real path too', () => {
    const rules = coverRules(policy([sshDeny(), deny(join(home, '.ssh-old', '*'))]));
    expect(accessOf(rules, join(home, 'key-link'))).toBeUndefined();
    // ~/.ssh-old/* names ~/dotfiles/ssh/* really: the key behind the link is not granted.
    expect(accessOf(rules, join(home, 'dotfiles'))).toBe('list');
    expect(accessOf(rules, join(home, 'dotfiles', 'ssh'))).toBe('list');
    expect(accessOf(rules, join(home, 'dotfiles', 'ssh', 'id_rsa'))).toBeUndefined();
  });

  it('R7.10: a grant inside a denied path is kept (the server names it: its cache directory, an --allow-read)', () => {
    const extra = join(home, '.aws', 'config');
    const rules = coverRules({
      ...policy([deny(join(home, '.aws'))]),
      grants: [...policy([]).grants, { path: extra, access: 'read' }],
    });
    // The file does not exist: nothing to grant.
    expect(accessOf(rules, extra)).toBeUndefined();
    const credentials = join(home, '.aws', 'credentials');
    const granted = coverRules({
      ...policy([deny(join(home, '.aws'))]),
      grants: [...policy([]).grants, { path: credentials, access: 'read' }],
    });
    expect(accessOf(granted, credentials)).toBe('read');
    expect(accessOf(granted, join(home, '.aws'))).toBeUndefined();
  });

  it('R7.10: deniedBy names the entry for a path, one beneath it, and a link to it', () => {
    const denies = [sshDeny(), deny(join(home, '.aws'))];
    expect(deniedBy(denies, join(home, '.aws', 'credentials'))?.path).toBe(join(home, '.aws'));
    expect(deniedBy(denies, join(home, '.ssh', 'id_ed25519'))?.why).toBe('a secret');
    expect(deniedBy(denies, join(home, 'key-link'))).toBeDefined();
    expect(deniedBy(denies, join(home, '.ssh', 'known_hosts'))).toBeUndefined();
    expect(deniedBy(denies, join(home, '.bashrc'))).toBeUndefined();
  });

  it('R7.10: the shipped lists cover the credentials the issue names, with ~ made HOME', () => {
    const denies = shippedDenies('/home/someone');
    const paths = denies.map((entry) => entry.path);
    for (const path of [
      '/home/someone/.ssh/*',
      '/home/someone/.aws',
      '/home/someone/.azure',
      '/home/someone/.config/gcloud',
      '/home/someone/.config/gh',
      '/home/someone/.netrc',
      '/home/someone/.git-credentials',
      '/home/someone/.docker/config.json',
      '/home/someone/.kube',
      '/home/someone/.gnupg',
      '/home/someone/.password-store',
      '/home/someone/.npmrc',
      '/home/someone/.pypirc',
      '/home/someone/.cargo/credentials.toml',
      '/etc/shadow',
    ]) {
      expect(paths).toContain(path);
    }
    const ssh = denies.find((entry) => entry.path === '/home/someone/.ssh/*');
    expect(ssh?.except).toEqual(expect.arrayContaining(['known_hosts', 'config', '*.pub']));
    expect(ssh?.list).toBe('the credentials deny list');
    // Without a HOME, the ~/ entries are dropped and the system ones stay.
    expect(shippedDenies(undefined).every((entry) => !entry.path.startsWith('~'))).toBe(true);
    expect(shippedDenies(undefined).map((entry) => entry.path)).toContain('/etc/shadow');
  });
});

describe.runIf(process.platform === 'linux')('R7.10: the helper enforces the cover', () => {
  beforeAll(() => buildHelperIfStale(), 60_000);

  const flags = (rules: readonly Rule[]) =>
    rules.flatMap((rule) =>
      rule.access === 'write'
        ? ['--rw', rule.path]
        : [rule.access === 'read' ? '--read' : '--list', rule.path],
    );

  const sandboxed = async (rules: readonly Rule[], script: string) => {
    const { stdout } = await run(helper, [...flags(rules), '--', 'bash', '-c', script], {
      cwd: scope,
    });
    return stdout;
  };

  it('R7.10: a denied key is unreadable by cat, through /proc/self/root, a link and a subprocess; allowed files read', async () => {
    const rules = coverRules(policy([sshDeny(), deny(join(home, '.aws'))]));
    const key = join(home, '.ssh', 'id_ed25519');
    const out = await sandboxed(
      rules,
      [
        `cat ${key} || echo DENIED-1`,
        `cat /proc/self/root${key} || echo DENIED-2`,
        `cat ${join(home, 'key-link')} || echo DENIED-3`,
        `python3 -c 'open("${join(home, '.aws', 'credentials')}").read()' 2>/dev/null || echo DENIED-4`,
        `ln ${key} ${join(scope, 'hard')} 2>/dev/null || echo DENIED-5`,
        `cat ${join(home, '.ssh', 'known_hosts')} ${join(home, '.bashrc')}`,
        `ls ${join(home, '.ssh')} | sort | tr '\\n' ' '`,
      ].join('\n'),
    );
    expect(out).not.toContain('PRIVATE KEY');
    expect(out).not.toContain('AWS SECRET');
    for (const n of [1, 2, 3, 4, 5]) expect(out).toContain(`DENIED-${String(n)}`);
    expect(out).toContain('example.org ssh-ed25519');
    expect(out).toContain('alias ll=ls');
    // Names stay listable; contents do not.
    expect(out).toContain('id_ed25519 id_ed25519.pub');
  });

  it('R7.10: a --read path that went away or became a link is skipped, not followed', async () => {
    const moved = join(home, '.config', 'editor');
    const rules = coverRules(policy([sshDeny()]));
    // After the rules were made, the granted entry is replaced by a link to the key's directory.
    const gone = join(home, 'gone');
    await mkdir(gone);
    const withGone = [...rules, { path: gone, access: 'read' as const }];
    await rm(gone, { recursive: true });
    await symlink(join(home, '.ssh'), gone);
    try {
      const out = await sandboxed(
        withGone,
        `cat ${join(gone, 'id_ed25519')} || echo DENIED; cat ${join(moved, 'settings')}`,
      );
      expect(out).toContain('DENIED');
      expect(out).not.toContain('PRIVATE KEY');
      expect(out).toContain('tabs');
    } finally {
      await rm(gone);
    }
    expect(await readFile(join(home, '.ssh', 'id_ed25519'), 'utf8')).toBe('PRIVATE KEY\n');
  });

  it('R7.10: without --read or --read-all the helper refuses to start (no silent read-everything)', async () => {
    const failed = await run(helper, ['--rw', scope, '--', 'true']).catch(
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(failed).toMatchObject({ code: 125 });
    expect((failed as { stderr: string }).stderr).toContain('no read rules');
  });
});
