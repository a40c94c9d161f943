// R7.1: the sandbox scope is --sandbox-scope, else AHMA_SANDBOX_SCOPE, else the working directory,
// resolved to its real path; the filesystem root, a missing path and a file are refused.
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSandboxScope, SANDBOX_SCOPE_ENV } from '../../src/sandbox/scope.js';
import { refusal, removeAll, varTmpDir } from '../support/engine.js';

let base: string;
let fromOption: string;
let fromEnv: string;
let fromCwd: string;

beforeAll(async () => {
  base = await varTmpDir('scopes');
  fromOption = join(base, 'option');
  fromEnv = join(base, 'env');
  fromCwd = join(base, 'cwd');
  await Promise.all([fromOption, fromEnv, fromCwd].map((dir) => mkdir(dir)));
});

afterAll(() => removeAll([base]));

describe('resolveSandboxScope', () => {
  it('R7.1: --sandbox-scope wins over AHMA_SANDBOX_SCOPE and the working directory', async () => {
    const scope = await resolveSandboxScope({
      scope: fromOption,
      env: { [SANDBOX_SCOPE_ENV]: fromEnv },
      cwd: fromCwd,
    });
    expect(scope).toBe(fromOption);
  });

  it('R7.1: AHMA_SANDBOX_SCOPE wins over the working directory when no option is given', async () => {
    expect(await resolveSandboxScope({ env: { [SANDBOX_SCOPE_ENV]: fromEnv }, cwd: fromCwd })).toBe(
      fromEnv,
    );
    // An empty option (e.g. an unset shell variable) does not count as given.
    expect(
      await resolveSandboxScope({ scope: '', env: { [SANDBOX_SCOPE_ENV]: fromEnv }, cwd: fromCwd }),
    ).toBe(fromEnv);
  });

  it('R7.1: the working directory is the last resort', async () => {
    expect(await resolveSandboxScope({ cwd: fromCwd })).toBe(fromCwd);
    expect(await resolveSandboxScope({ env: { [SANDBOX_SCOPE_ENV]: '' }, cwd: fromCwd })).toBe(
      fromCwd,
    );
  });

  it('R7.1: the scope is resolved to its real path (a symlinked scope resolves)', async () => {
    const link = join(base, 'link-to-option');
    await symlink(fromOption, link);
    expect(await resolveSandboxScope({ scope: link, cwd: fromCwd })).toBe(fromOption);
    expect(await resolveSandboxScope({ scope: `${fromOption}/../option/.`, cwd: fromCwd })).toBe(
      fromOption,
    );
  });

  it('R7.1: the filesystem root is refused with an actionable message', async () => {
    const error = await refusal(resolveSandboxScope({ scope: '/', cwd: fromCwd }));
    expect(error.code).toBe('SCOPE_INVALID');
    expect(error.message).toMatch(/filesystem root/);
    expect(error.message).toMatch(/--sandbox-scope/);
    // A root reached through the environment or the working directory is refused the same way.
    const viaEnv = await refusal(
      resolveSandboxScope({ env: { [SANDBOX_SCOPE_ENV]: '/' }, cwd: fromCwd }),
    );
    expect(viaEnv.code).toBe('SCOPE_INVALID');
    expect(viaEnv.message).toContain(SANDBOX_SCOPE_ENV);
    expect((await refusal(resolveSandboxScope({ cwd: '/' }))).code).toBe('SCOPE_INVALID');
    // …and through a symlink to it.
    const rootLink = join(base, 'root-link');
    await symlink('/', rootLink);
    expect((await refusal(resolveSandboxScope({ scope: rootLink, cwd: fromCwd }))).code).toBe(
      'SCOPE_INVALID',
    );
  });

  it('R7.1: a missing directory is refused (SCOPE_INVALID), naming the path and its origin', async () => {
    const missing = join(base, 'does-not-exist');
    const error = await refusal(resolveSandboxScope({ scope: missing, cwd: fromCwd }));
    expect(error.code).toBe('SCOPE_INVALID');
    expect(error.message).toContain(missing);
    expect(error.message).toContain('--sandbox-scope');
    expect(error.message).toMatch(/does not exist/);
  });

  it('R7.1: a regular file is refused (SCOPE_INVALID)', async () => {
    const file = join(base, 'a-file');
    await writeFile(file, 'not a directory\n');
    const error = await refusal(
      resolveSandboxScope({ env: { [SANDBOX_SCOPE_ENV]: file }, cwd: fromCwd }),
    );
    expect(error.code).toBe('SCOPE_INVALID');
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not a directory/);
  });
});
