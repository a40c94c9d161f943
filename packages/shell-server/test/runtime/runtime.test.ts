// R7.14: only the person starting Ahma widens the sandbox. --profile and the bundles given to
// --tools enable toolchain profiles; a tool file in the scope naming one gets nothing (a warning
// says which flag would), and a bundle revealed later by the agent gets nothing either
// (activate_tools answers with the flag). A temporary HOME stands in for the person's.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  structured,
  textOf,
  type CommandResult,
  type E2E,
  type Scope,
} from '../support/harness.js';

const npmInstalled = (process.env['PATH'] ?? '')
  .split(':')
  .some((dir) => dir !== '' && existsSync(join(dir, 'npm')));

/** A scope whose server sees `home` as HOME. */
async function scopeWithHome(e2e: E2E): Promise<{ scope: Scope; home: string }> {
  const scope = await e2e.scope({ noTools: true });
  const home = await e2e.outsideDir();
  return { scope: { ...scope, env: { ...scope.env, HOME: home } }, home };
}

/** A tool file in the scope's tools directory that names the android profile. */
async function projectToolNamingAndroid(scope: Scope): Promise<void> {
  await writeFile(
    join(scope.dir, '.ahma', 'tools', 'adb-ish.json'),
    JSON.stringify({
      name: 'adbish',
      description: 'Says hello.',
      command: 'echo',
      synchronous: true,
      sandbox_profiles: ['android'],
    }),
  );
}

const shell = async (server: Awaited<ReturnType<E2E['inProcess']>>, command: string) =>
  structured<CommandResult>(await server.call('sandboxed_shell', { command }));

describe.concurrent('sandbox profiles in the server', { timeout: 60_000 }, () => {
  it('R7.14: a tool file in the scope naming a profile does not get it; the log names the flag that would', async ({
    e2e,
  }) => {
    const { scope, home } = await scopeWithHome(e2e);
    await projectToolNamingAndroid(scope);
    const server = await e2e.inProcess(scope, ['--sync', '--log-to-stderr']);
    const tools = (await server.client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('adbish'); // served, without the profile
    expect(existsSync(join(home, '.android'))).toBe(false);
    const refused = await shell(server, `mkdir -p ${home}/.android/x`);
    expect(refused.exit_code).not.toBe(0);
    expect(refused.output).toMatch(/Permission denied/);
    expect(server.stderr()).toMatch(
      /adbish names sandbox profiles that are not enabled \(android\): a tool file never widens the sandbox; the person running Ahma can, with --profile android/,
    );
  });

  it('R7.14: with --profile android the same server makes ~/.android and commands write there', async ({
    e2e,
  }) => {
    const { scope, home } = await scopeWithHome(e2e);
    await projectToolNamingAndroid(scope);
    const server = await e2e.inProcess(scope, [
      '--sync',
      '--log-to-stderr',
      '--profile',
      'android',
    ]);
    const made = await shell(server, `mkdir -p ${home}/.android/x && echo made`);
    expect(made).toMatchObject({ exit_code: 0 });
    expect(existsSync(join(home, '.android', 'x'))).toBe(true);
    expect(server.stderr()).not.toMatch(/names sandbox profiles that are not enabled/);
    // HOME beside it stays read-only.
    expect((await shell(server, `touch ${home}/other`)).exit_code).not.toBe(0);
  });

  it('R7.14: the bundles given to --tools enable their profiles at start (cargo: its caches, not ~/.cargo itself)', async ({
    e2e,
  }) => {
    const { scope, home } = await scopeWithHome(e2e);
    await mkdir(join(home, '.cargo'));
    const server = await e2e.inProcess(scope, ['--sync', '--log-to-stderr', '--tools', 'cargo']);
    expect(server.stderr()).toMatch(/sandbox profiles enabled by the bundles given to --tools/);
    const cached = await shell(server, `touch ${home}/.cargo/registry/f ${home}/.cargo/git/f`);
    expect(cached.exit_code, cached.output).toBe(0);
    expect((await shell(server, `mkdir ${home}/.cargo/bin`)).exit_code).not.toBe(0);
  });

  it('R7.14: --allow-write (~/) and --deny-read reach the commands', async ({ e2e }) => {
    const { scope, home } = await scopeWithHome(e2e);
    await mkdir(join(home, 'out'));
    await writeFile(join(home, 'secret.txt'), 'hidden');
    const server = await e2e.inProcess(scope, [
      '--sync',
      '--allow-write',
      '~/out',
      '--deny-read',
      '~/secret.txt',
    ]);
    expect((await shell(server, `touch ${home}/out/f`)).exit_code).toBe(0);
    const read = await shell(server, `cat ${home}/secret.txt`);
    expect(read.exit_code).not.toBe(0);
    expect(read.output).not.toContain('hidden');
  });

  it.skipIf(!npmInstalled)(
    'R7.14: a bundle revealed by the agent gets no profile; activate_tools answers with the flag that would enable it',
    async ({ e2e }) => {
      const { scope, home } = await scopeWithHome(e2e);
      const server = await e2e.inProcess(scope);
      const result = await server.call('activate_tools', { action: 'reveal', bundle: 'npm' });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toMatch(
        /npm's tools run without the sandbox profile\(s\) it names \(npm\).*restarting it with --profile npm\./,
      );
      expect(structured<Record<string, unknown>>(result)['sandbox_profiles_not_enabled']).toEqual([
        { bundle: 'npm', profiles: ['npm'], flag: '--profile npm' },
      ]);
      expect(existsSync(join(home, '.npm'))).toBe(false);
      // Enabled at start, the same reveal reports nothing.
      const enabled = await e2e.inProcess(scope, ['--profile', 'npm']);
      const again = await enabled.call('activate_tools', { action: 'reveal', bundle: 'npm' });
      expect(structured<Record<string, unknown>>(again)).not.toHaveProperty(
        'sandbox_profiles_not_enabled',
      );
    },
  );
});

describe.concurrent("Ahma's secret files named by path", { timeout: 60_000 }, () => {
  it('R7.10: --http-token-file and AHMA_HTTP_CLIENT_TOKEN_PATH outside the private state are unreadable by commands', async ({
    e2e,
  }) => {
    const { scope, home } = await scopeWithHome(e2e);
    const httpToken = join(home, 'http-token');
    const oauthStore = join(home, 'oauth-store.json');
    await writeFile(httpToken, 'rt-http-token-in-home\n', { mode: 0o600 });
    await writeFile(oauthStore, '{"rt":"oauth-store-in-home"}\n', { mode: 0o600 });
    await writeFile(join(home, 'ordinary'), 'ordinary-in-home\n');
    const server = await e2e.inProcess(
      { ...scope, env: { ...scope.env, AHMA_HTTP_CLIENT_TOKEN_PATH: oauthStore } },
      ['--sync', '--http-token-file', httpToken],
    );
    const result = await shell(server, `cat ${httpToken} ${oauthStore} ${home}/ordinary 2>&1`);
    expect(result.output).toContain('ordinary-in-home');
    expect(result.output).not.toContain('rt-http-token-in-home');
    expect(result.output).not.toContain('oauth-store-in-home');
    expect(result.output).toContain(`${httpToken}: Permission denied`);
    expect(result.output).toContain(`${oauthStore}: Permission denied`);
  });
});
