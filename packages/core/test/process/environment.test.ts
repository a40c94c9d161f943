// SPEC §3: commands run non-interactively (CI=1, GIT_TERMINAL_PROMPT=0, pagers are cat, apt does not
// ask), with the caches tools write in HOME redirected into the per-server cache root.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpdir } from 'node:os';
import {
  CACHE_ENV,
  commandEnvironment,
  NON_INTERACTIVE_ENV,
  tempDirectory,
} from '../../src/process/environment.js';

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
