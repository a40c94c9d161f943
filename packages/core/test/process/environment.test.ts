// SPEC §3: commands run non-interactively (CI=1, GIT_TERMINAL_PROMPT=0, pagers are cat, apt does not
// ask), with the caches tools write in HOME redirected into the per-server cache root. R7.9: the
// variables the server denies (its secrets, livelog API keys, --env-deny) never reach a command.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import { AhmaError } from '../../src/errors.js';
import {
  CACHE_ENV,
  commandEnvironment,
  envDenyMatcher,
  envDenyProblem,
  NON_INTERACTIVE_ENV,
  tempDirectory,
} from '../../src/process/environment.js';
import { createEngine } from '../../src/engine.js';
import { engineFixture, removeAll, run, varTmpDir, type EngineFixture } from '../support/engine.js';

const cacheRoot = '/var/tmp/ahma-eng-cache-root';

describe('commandEnvironment', () => {
  it('SPEC §3: the non-interactive variables are always set, even over the base environment', () => {
    const env = commandEnvironment(
      {
        CI: '0',
        GIT_TERMINAL_PROMPT: '1',
        PAGER: 'less',
        GIT_PAGER: 'less -R',
        DEBIAN_FRONTEND: 'dialog',
      },
      cacheRoot,
    );
    expect(env).toMatchObject({
      CI: '1',
      GIT_TERMINAL_PROMPT: '0',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      DEBIAN_FRONTEND: 'noninteractive',
    });
    expect(commandEnvironment({}, undefined)).toMatchObject(NON_INTERACTIVE_ENV);
  });

  it('SPEC §3: cache variables point into the cache root', () => {
    const env = commandEnvironment(
      { XDG_CACHE_HOME: '/root/.cache', npm_config_cache: '/x' },
      cacheRoot,
    );
    expect(Object.keys(CACHE_ENV)).toEqual(
      expect.arrayContaining(['XDG_CACHE_HOME', 'npm_config_cache', 'PIP_CACHE_DIR', 'GOCACHE']),
    );
    for (const [key, dir] of Object.entries(CACHE_ENV)) {
      expect(env[key]).toBe(join(cacheRoot, dir));
      expect(env[key]?.startsWith(`${cacheRoot}/`)).toBe(true);
    }
    // Without a cache root the server's own values are left alone.
    expect(
      commandEnvironment({ XDG_CACHE_HOME: '/root/.cache' }, undefined)['XDG_CACHE_HOME'],
    ).toBe('/root/.cache');
  });

  it('SPEC §3: SSH_ASKPASS and GIT_ASKPASS are removed (no graphical password prompt)', () => {
    const env = commandEnvironment(
      { SSH_ASKPASS: '/usr/bin/ssh-askpass', GIT_ASKPASS: '/usr/bin/git-askpass', KEEP: 'x' },
      cacheRoot,
    );
    expect(env).not.toHaveProperty('SSH_ASKPASS');
    expect(env).not.toHaveProperty('GIT_ASKPASS');
    expect(env['KEEP']).toBe('x');
  });

  it('SPEC §3: BASH_ENV and ENV are removed, so no startup file runs before a script', () => {
    const env = commandEnvironment(
      { BASH_ENV: '/home/u/.bashenv', ENV: '/home/u/.shrc' },
      cacheRoot,
    );
    expect(env).not.toHaveProperty('BASH_ENV');
    expect(env).not.toHaveProperty('ENV');
  });

  it('SPEC §3: base variables are kept; undefined ones are dropped; the base is not mutated', () => {
    const base = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/agent',
      LANG: 'C.UTF-8',
      UNSET: undefined,
      GIT_ASKPASS: 'x',
    };
    const copy = { ...base };
    const env = commandEnvironment(base, cacheRoot);
    expect(env).toMatchObject({ PATH: base.PATH, HOME: base.HOME, LANG: base.LANG });
    expect(env).not.toHaveProperty('UNSET');
    expect(Object.values(env).every((value) => typeof value === 'string')).toBe(true);
    expect(base).toEqual(copy);
  });
});

describe('tempDirectory', () => {
  it('R7.2: the temp directory commands may write is the one the given environment names', () => {
    expect(tempDirectory({ TMPDIR: '/srv/t/', TMP: '/x' })).toBe('/srv/t');
    expect(tempDirectory({ TMPDIR: '', TMP: '/x', TEMP: '/y' })).toBe('/x');
    expect(tempDirectory({ TEMP: '/y' })).toBe('/y');
    expect(tempDirectory({})).toBe('/tmp');
    expect(tempDirectory({ TMPDIR: '/' })).toBe('/');
  });

  it("R7.2: it finds what os.tmpdir() finds in the process's own environment", () => {
    expect(tempDirectory(process.env)).toBe(tmpdir());
  });
});

describe('R7.9: denied variables', () => {
  // [entries, name, denied?]
  const table: [readonly string[], string, boolean][] = [
    [['AHMA_HTTP_TOKEN'], 'AHMA_HTTP_TOKEN', true],
    [['AHMA_HTTP_TOKEN'], 'AHMA_HTTP_TOKEN_FILE', false],
    [['AHMA_HTTP_TOKEN'], 'XAHMA_HTTP_TOKEN', false],
    [['AHMA_HTTP_TOKEN'], 'ahma_http_token', false],
    [['AWS_*'], 'AWS_SECRET_ACCESS_KEY', true],
    [['AWS_*'], 'AWS_', true],
    [['AWS_*'], 'AWS', false],
    [['AWS_*'], 'MY_AWS_KEY', false],
    [['*_TOKEN'], 'GITHUB_TOKEN', true],
    [['*_TOKEN'], 'GITHUB_TOKEN_FILE', false],
    [['*TOKEN*'], 'A_TOKEN_B', true],
    [['K?Y'], 'KEY', true],
    [['K?Y'], 'KY', false],
    [['K?Y'], 'KEEY', false],
    [['*'], 'ANYTHING', true],
    [['A', 'B*'], 'BETA', true],
    [['A', 'B*'], 'ALPHA', false],
    [[], 'AHMA_HTTP_TOKEN', false],
  ];
  it.each(table)('R7.9: %j denies %s: %s', (entries, name, denied) => {
    expect(envDenyMatcher(entries)(name)).toBe(denied);
    const env = commandEnvironment({ [name]: 'secret', KEEP: 'kept' }, undefined, entries);
    expect(name in env).toBe(!denied);
    if (!entries.includes('*')) expect(env['KEEP']).toBe('kept');
  });

  it.each(['AWS_*', 'K?Y', 'lower_case_1', '_', '*'])('R7.9: %j is a valid entry', (entry) => {
    expect(envDenyProblem(entry)).toBeUndefined();
  });

  it.each(['', 'A-B', 'A B', 'A=B', 'A.B', '[A]', 'A/B', 'AWS_{X,Y}', 'ÄÖ', '$HOME'])(
    'R7.9: %j is malformed: a clear error, never a silent no-op',
    (entry) => {
      expect(envDenyProblem(entry)).toMatch(/^--env-deny: .* is not a variable name or a glob/);
      expect(() => envDenyMatcher(['OK', entry])).toThrow(AhmaError);
      expect(() => commandEnvironment({}, undefined, [entry])).toThrow(/--env-deny/);
    },
  );

  it("R7.9: Ahma's own settings stay, even under a glob that covers them", () => {
    const env = commandEnvironment({ CI: '0', XDG_CACHE_HOME: '/x', PATH: '/bin' }, cacheRoot, [
      '*',
    ]);
    expect(env).toEqual({
      ...NON_INTERACTIVE_ENV,
      ...Object.fromEntries(
        Object.entries(CACHE_ENV).map(([key, dir]) => [key, join(cacheRoot, dir)]),
      ),
    });
  });
});

describe('R7.9: the engine never gives commands a denied variable', () => {
  const base = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: process.env['HOME'] ?? '/root',
    AHMA_HTTP_TOKEN: 'tok-secret',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    LATE_KEY: 'late-secret',
    ORDINARY: 'ordinary-value',
  };
  let pooled: EngineFixture;
  let direct: EngineFixture;
  beforeAll(async () => {
    const options = { env: base, envDeny: ['AHMA_HTTP_TOKEN', 'AWS_*'], timings: { graceMs: 300 } };
    pooled = await engineFixture({ ...options, noShellPool: false, poolSize: 1 });
    direct = await engineFixture({ ...options, noShellPool: true });
  });
  afterAll(async () => {
    await pooled.dispose();
    await direct.dispose();
  });

  /** What `env` prints, then the process's initial environment as /proc shows it (prefixed). */
  const printEnv = async (fixture: EngineFixture) =>
    (
      await run(fixture.engine, {
        kind: 'shell',
        script: 'env; cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/proc:/"',
      })
    ).output;

  it('R7.9: denied at start: neither a pooled nor a direct command sees them; others pass', async () => {
    for (const fixture of [pooled, direct]) {
      const output = await printEnv(fixture);
      expect(output).toMatch(/^ORDINARY=ordinary-value$/m);
      expect(output).toMatch(/^proc:ORDINARY=ordinary-value$/m);
      expect(output).toMatch(/^proc:LATE_KEY=late-secret$/m);
      expect(output).not.toContain('tok-secret');
      expect(output).not.toContain('aws-secret');
      expect(fixture.engine.executor.env).not.toHaveProperty('AHMA_HTTP_TOKEN');
    }
    expect(pooled.engine.pool?.stats.pooled).toBeGreaterThan(0);
  });

  it('R7.9: denyEnv reaches the next command, pooled (new warm shells) and direct', async () => {
    const before = pooled.engine.pool;
    expect(pooled.engine.denyEnv(['LATE_KEY'])).toBe(true);
    expect(pooled.engine.pool).not.toBe(before); // the old warm shells take no new command
    expect(pooled.engine.denyEnv(['LATE_KEY'])).toBe(false); // nothing new
    expect(pooled.engine.denyEnv(['NOT_SET_ANYWHERE'])).toBe(false); // nothing removed
    expect(pooled.engine.pool).not.toBe(before);
    expect(direct.engine.denyEnv(['LATE_*'])).toBe(true);
    for (const fixture of [pooled, direct]) {
      const output = await printEnv(fixture);
      expect(output).toMatch(/^proc:ORDINARY=ordinary-value$/m);
      expect(output).not.toContain('late-secret');
      expect(output).not.toContain('tok-secret');
    }
    expect(pooled.engine.pool?.stats.pooled).toBeGreaterThan(0);
    expect(() => pooled.engine.denyEnv(['OK', 'BAD-NAME'])).toThrow(/--env-deny: "BAD-NAME"/);
  });

  it('R7.9: a malformed --env-deny entry refuses the start, leaving nothing behind', async () => {
    const scope = await varTmpDir('scope');
    const stateDir = await varTmpDir('state');
    try {
      await expect(
        createEngine({ scope, stateDir, env: base, envDeny: ['AWS-*'], noShellPool: true }),
      ).rejects.toMatchObject({
        code: 'CONFIG_INVALID',
        message: expect.stringContaining('"AWS-*"'),
      });
      expect(await import('node:fs/promises').then((fs) => fs.readdir(stateDir))).toEqual([]);
    } finally {
      await removeAll([scope, stateDir]);
    }
  });
});
