// ahma-list-tools --http, called in-process, against a server behind a real authorization server
// (R14): it prints the login URL, the test plays the browser, the tools are listed; the next run
// reuses the tokens; --logout forgets them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createBrowser,
  freePort,
  startOAuthWorld,
} from '../../../remote/test/support/oauth-world.js';
import { listTools as run } from '../support/list-tools.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The login URL it printed, if it asked for a login. */
  loginUrl: string | undefined;
}

/** Runs ahma-list-tools; when it prints a login URL, the browser follows it. */
async function listTools(args: string[], tokenPath: string): Promise<Run> {
  let loginUrl: string | undefined;
  const { code, stdout, stderr } = await run(
    args,
    { ...process.env, AHMA_HTTP_CLIENT_TOKEN_PATH: tokenPath },
    (stderrSoFar) => {
      const printed = /^ {2}(http\S+)$/m.exec(stderrSoFar)?.[1];
      if (printed !== undefined && loginUrl === undefined) {
        loginUrl = printed;
        void createBrowser().authorize(printed);
      }
    },
  );
  return { code, stdout, stderr, loginUrl };
}

describe('ahma-list-tools and OAuth', () => {
  it('R14.4: the first run prints the login URL, takes the callback and lists the tools; the next run reuses the tokens; --logout forgets them', async () => {
    const world = await startOAuthWorld();
    cleanups.push(() => world.close());
    const dir = await mkdtemp(join(tmpdir(), 'ahma-list-oauth-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const tokenPath = join(dir, 'tokens.json');
    const url = world.mcpUrl.href;
    const args = ['--http', url, '--no-browser', '--callback-port', String(await freePort())];

    const first = await listTools(args, tokenPath);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('the server asks you to log in. Open this URL:');
    expect(new URL(first.loginUrl ?? '').origin).toBe(world.issuer);
    for (const tool of ['echo', 'fail', 'slow']) expect(first.stdout).toContain(tool);
    expect(await readFile(tokenPath, 'utf8')).toContain(url);

    const second = await listTools(args, tokenPath);
    expect(second.code, second.stderr).toBe(0);
    expect(second.loginUrl).toBeUndefined();
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe(first.stdout);

    const logout = await listTools(['--logout', url], tokenPath);
    expect(logout).toMatchObject({
      code: 0,
      stdout: `Forgot the tokens of ${url} (in ${tokenPath}).\n`,
    });
    expect(await readFile(tokenPath, 'utf8')).not.toContain(url);
    const again = await listTools(['--logout', url], tokenPath);
    expect(again.stdout).toContain('No tokens were kept');
  });
});
