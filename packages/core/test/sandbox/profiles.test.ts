// R7.14: toolchain profiles as data (policy/profiles.json): checked when loaded (a profile that
// would grant a credential refuses the file), looked up by name with a did-you-mean, turned into
// paths under HOME, prepared at start (missing write directories made only where safe), and
// enforced: with the android profile a sandboxed `mkdir -p ~/.android/x` works, without it EACCES.
import { existsSync } from 'node:fs';
import { lstat, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import shipped from '../../policy/profiles.json' with { type: 'json' };
import { createEngine } from '../../src/engine.js';
import {
  checkProfiles,
  prepareGrants,
  profileGrants,
  profileHosts,
  profileProblem,
  PROFILE_NAMES,
  shippedProfiles,
} from '../../src/sandbox/profiles.js';
import { bash, engineFixture, removeAll, run, varTmpDir } from '../support/engine.js';

const data = (profiles: Record<string, unknown>) => ({ profiles });
const profile = (fields: Record<string, unknown>) => ({
  description: 'a test profile',
  read: [],
  write: [],
  ...fields,
});

describe('the shipped profiles', () => {
  it('R7.14: cover the common toolchains, each with a one-line description', () => {
    for (const name of ['cargo', 'rustup', 'npm', 'pip', 'go', 'gradle', 'maven', 'android']) {
      expect(shippedProfiles()[name], name).toBeDefined();
      expect(shippedProfiles()[name]?.description, name).not.toMatch(/\n/);
    }
    expect(shippedProfiles()['android']?.write).toEqual(['~/.android']);
    expect(shippedProfiles()['rustup']?.read).toEqual(['~/.rustup']);
    expect(shippedProfiles()['maven']?.write).toEqual(['~/.m2/repository']);
    expect(shippedProfiles()['pip']?.write).toEqual(['~/.cache/pip']);
    expect(shippedProfiles()['go']?.write).toEqual(
      expect.arrayContaining(['~/go/pkg/mod', '~/.cache/go-build']),
    );
  });

  it('R7.14: cargo writes its caches and lock files, never ~/.cargo itself, its bin or credentials', () => {
    const cargo = shippedProfiles()['cargo'];
    const written = [...(cargo?.write ?? []), ...(cargo?.write_files ?? [])];
    expect(written).toEqual(
      expect.arrayContaining(['~/.cargo/registry', '~/.cargo/git', '~/.cargo/.package-cache']),
    );
    expect(
      written.filter((path) => /^~\/\.cargo\/?(bin|credentials.*|config.*)?$/.test(path)),
    ).toEqual([]);
  });

  it('R7.14: gradle writes beneath ~/.gradle, not ~/.gradle itself (gradle.properties stays unwritable), and says why', () => {
    const gradle = shippedProfiles()['gradle'];
    expect(gradle?.write.length).toBeGreaterThan(0);
    for (const path of gradle?.write ?? []) expect(path).toMatch(/^~\/\.gradle\/[^/]+$/);
    expect(gradle?.write).not.toContain('~/.gradle');
    expect(gradle?.description).toMatch(/gradle\.properties/);
  });

  it('R7.14: the file passes its own check (what the first use does), and PROFILE_NAMES lists its profiles', () => {
    expect(Object.keys(checkProfiles(shipped))).toEqual(Object.keys(shippedProfiles()));
    expect(PROFILE_NAMES).toEqual(Object.keys(shippedProfiles()));
  });
});

describe('checkProfiles', () => {
  it.each([
    ['a private key', { write: ['~/.ssh/id_ed25519'] }, /lies in .*\.ssh.*credentials deny list/],
    ['a credentials directory', { read: ['~/.aws'] }, /lies in .*\.aws/],
    ['a file in one', { write_files: ['~/.aws/credentials'] }, /lies in .*\.aws/],
    ['crates.io tokens', { write_files: ['~/.cargo/credentials.toml'] }, /crates\.io tokens/],
    ['a directory holding credentials', { write: ['~/.config'] }, /would hold .*\.config/],
    ['a directory holding system secrets', { write: ['/etc'] }, /would hold \/etc\//],
  ])('R7.14: refuses a profile granting %s', (_, fields, message) => {
    expect(() => checkProfiles(data({ bad: profile(fields) }))).toThrow(message);
    expect(() => checkProfiles(data({ bad: profile(fields) }))).toThrow(/sandbox profile "bad"/);
  });

  it('R7.14: accepts what the deny lists leave readable, and a read path holding a deny entry (the cover leaves it out)', () => {
    expect(() =>
      checkProfiles(data({ ok: profile({ read: ['~/.ssh/known_hosts', '~/.config'] }) })),
    ).not.toThrow();
  });

  it.each([
    ['a relative path', { write: ['cache'] }],
    ['a ".." segment', { write: ['~/.cache/../.ssh'] }],
    ['HOME itself', { write: ['~/'] }],
    ['the root', { read: ['/'] }],
    ['an unknown key', { exec: [] }],
    ['no description', { description: '' }],
  ])('R7.14: refuses malformed data: %s', (_, fields) => {
    expect(() => checkProfiles(data({ bad: profile(fields) }))).toThrow();
  });
});

describe("the profiles' hosts", () => {
  it('R7.17: the package registries and GitHub are named by the profiles that need them', () => {
    expect(profileHosts(['npm'])).toEqual(['registry.npmjs.org', 'registry.yarnpkg.com']);
    expect(profileHosts(['cargo'])).toEqual(['index.crates.io', 'static.crates.io', 'crates.io']);
    expect(profileHosts(['pip'])).toEqual(['pypi.org', 'files.pythonhosted.org']);
    expect(profileHosts(['go'])).toEqual(['proxy.golang.org', 'sum.golang.org']);
    expect(profileHosts(['github'])).toEqual([
      'github.com',
      'api.github.com',
      'codeload.github.com',
      'objects.githubusercontent.com',
    ]);
    // Named twice (npm and pnpm share a registry), listed once; a profile without hosts adds none.
    expect(profileHosts(['npm', 'pnpm', 'rustup'])).toEqual([
      'registry.npmjs.org',
      'registry.yarnpkg.com',
    ]);
    expect(() => profileHosts(['nope'])).toThrow(/unknown sandbox profile "nope"/);
  });

  it.each([['*'], ['https://example.com'], ['*.'], ['a*.example.com']])(
    'R7.17: a profile naming the host rule %s is refused, whole',
    (host) => {
      expect(() => checkProfiles(data({ bad: profile({ hosts: [host] }) }))).toThrow();
    },
  );
});

describe('profileProblem and profileGrants', () => {
  it('R7.14: an unknown name is refused with the closest profile and the list of all', () => {
    expect(profileProblem('cargo')).toBeUndefined();
    const problem = profileProblem('carg') ?? '';
    expect(problem).toMatch(/unknown sandbox profile "carg" \(did you mean "cargo"\?\)/);
    for (const name of Object.keys(shippedProfiles())) expect(problem).toContain(name);
    expect(profileProblem('toString')).toMatch(/unknown sandbox profile/);
  });

  it("R7.14: grants a profile's paths under HOME, write files with the write directories", () => {
    expect(profileGrants(['android', 'rustup'], '/home/u')).toEqual({
      read: ['/home/u/.rustup'],
      write: ['/home/u/.android'],
    });
    expect(profileGrants(['cargo'], '/home/u').write).toEqual(
      expect.arrayContaining(['/home/u/.cargo/registry', '/home/u/.cargo/.package-cache']),
    );
    // Without a usable HOME a `~/` path names nothing.
    expect(profileGrants(['android'], undefined)).toEqual({ read: [], write: [] });
    expect(() => profileGrants(['androd'], '/home/u')).toThrow(/did you mean "android"/);
  });
});

describe('prepareGrants', () => {
  let home: string;
  beforeEach(async () => {
    home = await varTmpDir('home');
  });
  afterEach(() => removeAll([home]));

  const prepare = (fields: Partial<Parameters<typeof prepareGrants>[0]> = {}) =>
    prepareGrants({ home, profiles: [], read: [], write: [], denyRead: [], ...fields });

  it('R7.14: makes a missing write directory whose parent is a directory of this user (~/.android in HOME)', async () => {
    const grants = await prepare({ profiles: ['android'] });
    expect(grants.write).toEqual([join(home, '.android')]);
    expect(grants.created).toEqual([join(home, '.android')]);
    expect((await lstat(join(home, '.android'))).isDirectory()).toBe(true);
    expect(grants.skipped).toEqual([]);
  });

  it('R7.14: skips a missing path whose parent does not exist, making nothing (no ~/.cargo without cargo)', async () => {
    const grants = await prepare({ profiles: ['cargo', 'rustup'] });
    expect(grants).toMatchObject({ read: [], write: [], created: [] });
    expect(grants.skipped.join('\n')).toMatch(/\.cargo\/registry does not exist and is not made/);
    expect(grants.skipped.join('\n')).toMatch(/\.rustup does not exist/);
    expect(existsSync(join(home, '.cargo'))).toBe(false);
  });

  it('R7.14: with ~/.cargo there, makes its cache directories and empty lock files', async () => {
    await mkdir(join(home, '.cargo'));
    await mkdir(join(home, '.cargo', 'registry'));
    const grants = await prepare({ profiles: ['cargo'] });
    expect(grants.skipped).toEqual([]);
    expect(grants.write).toEqual(
      expect.arrayContaining([join(home, '.cargo/registry'), join(home, '.cargo/git')]),
    );
    expect(grants.created).not.toContain(join(home, '.cargo/registry'));
    expect(await readFile(join(home, '.cargo/.package-cache'), 'utf8')).toBe('');
    expect((await lstat(join(home, '.cargo/git'))).isDirectory()).toBe(true);
  });

  it('R7.14: makes nothing beneath a parent that is a link', async () => {
    const elsewhere = await varTmpDir('elsewhere');
    try {
      await symlink(elsewhere, join(home, '.m2'));
      const grants = await prepare({ profiles: ['maven'] });
      expect(grants.write).toEqual([]);
      expect(grants.skipped.join('\n')).toMatch(/\.m2 is a link/);
      expect(existsSync(join(elsewhere, 'repository'))).toBe(false);
    } finally {
      await removeAll([elsewhere]);
    }
  });

  it('R7.14: a profile path that is a link into a credential, or that --deny-read covers, is not granted', async () => {
    await mkdir(join(home, '.ssh'));
    await writeFile(join(home, '.ssh', 'id_ed25519'), 'key');
    await symlink(join(home, '.ssh'), join(home, '.android'));
    await mkdir(join(home, '.cache'));
    await mkdir(join(home, '.cache', 'pip'));
    const grants = await prepare({ profiles: ['android', 'pip'], denyRead: ['~/.cache/pip'] });
    expect(grants.write).toEqual([]);
    expect(grants.skipped.join('\n')).toMatch(
      /\.android \(really .*\.ssh\) would hold .*\.ssh\/\*/,
    );
    expect(grants.skipped.join('\n')).toMatch(/\.cache\/pip lies in .*--deny-read/);
  });

  it("R7.14: the operator's paths are kept (`~/` made HOME); an --allow-write path that does not exist refuses the start", async () => {
    await mkdir(join(home, 'data'));
    const grants = await prepare({ read: ['~/data', '/opt/x'], write: ['~/data'] });
    expect(grants).toMatchObject({
      read: [join(home, 'data'), '/opt/x'],
      write: [join(home, 'data')],
    });
    await expect(prepare({ write: ['~/missing'] })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/--allow-write ~\/missing: no such file/) as unknown,
    });
    await expect(prepare({ profiles: ['nope'] })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

describe('an engine with a profile', () => {
  let home: string;
  beforeEach(async () => {
    home = await varTmpDir('home');
  });
  afterEach(() => removeAll([home]));

  it('R7.14: with --profile android a sandboxed `mkdir -p ~/.android/x` succeeds; without it, EACCES', async () => {
    const env = { ...process.env, HOME: home };
    const without = await engineFixture({ env });
    try {
      const refused = await run(without.engine, bash(`mkdir -p ${home}/.android/x`));
      expect(refused.exitCode).not.toBe(0);
      expect(refused.output).toMatch(/Permission denied/);
      expect(existsSync(join(home, '.android'))).toBe(false);
    } finally {
      await without.dispose();
    }
    const withProfile = await engineFixture({ env, profiles: ['android'] });
    try {
      // The state-dir and install checks see the grant: it is one of the writable paths.
      expect(withProfile.engine.sandbox.writable).toContain(join(home, '.android'));
      const made = await run(withProfile.engine, bash(`mkdir -p ${home}/.android/x`));
      expect(made.exitCode).toBe(0);
      expect(existsSync(join(home, '.android', 'x'))).toBe(true);
      // Beside it, HOME stays read-only.
      const beside = await run(withProfile.engine, bash(`touch ${home}/other`));
      expect(beside.exitCode).not.toBe(0);
    } finally {
      await withProfile.dispose();
    }
  });

  it('R7.14: an unknown profile refuses the start', async () => {
    // Refused before anything is made: no state, no cache directory to clean up.
    await expect(
      createEngine({ scope: home, env: { ...process.env, HOME: home }, profiles: ['andriod'] }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/"android"/) as unknown,
    });
  });
});
