// R7.10: ~/.npmrc is denied (registry tokens), yet npm inside the sandbox keeps its settings: it is
// pointed at a copy without the credentials.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutCredentials } from '../../src/sandbox/npmrc.js';
import { bash, engineFixture, run, type EngineFixture } from '../support/engine.js';

const NPMRC = [
  '; the user settings',
  'fund=false',
  'registry=https://registry.example.org/',
  '//registry.example.org/:_authToken=npm_SECRET_TOKEN',
  '_auth = c2VjcmV0',
  '//other.example.org/:username=someone',
  '//other.example.org/:_password=cGFzcw==',
  'email=someone@example.org',
  'save-exact=true',
  '',
].join('\n');

describe('R7.10: npm settings without the credentials', () => {
  it('R7.10: withoutCredentials drops tokens, passwords, usernames and e-mail, scoped or not, and keeps the rest', () => {
    const kept = withoutCredentials(NPMRC);
    expect(kept).not.toMatch(/SECRET|c2VjcmV0|cGFzcw|someone/);
    expect(kept).toContain('fund=false');
    expect(kept).toContain('registry=https://registry.example.org/');
    expect(kept).toContain('save-exact=true');
    expect(kept).toContain('; the user settings');
  });

  const hasNpm = (() => {
    try {
      execFileSync('sh', ['-c', 'command -v npm'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  describe.runIf(process.platform === 'linux' && hasNpm)('through a real engine', () => {
    let home = '';
    let own: EngineFixture;

    beforeAll(async () => {
      home = await mkdtemp('/var/tmp/ahma-npmrc-home-');
      await writeFile(join(home, '.npmrc'), NPMRC, { mode: 0o600 });
      // As npm itself would start the server (npx): npm_config_userconfig names the file.
      own = await engineFixture({
        env: { ...process.env, HOME: home, npm_config_userconfig: join(home, '.npmrc') },
      });
    }, 60_000);

    afterAll(async () => {
      await own.dispose();
      await rm(home, { recursive: true, force: true });
    });

    it('R7.10: npm reads the settings of ~/.npmrc, the command reads no token', async () => {
      const result = await run(
        own.engine,
        bash(
          `npm config get save-exact; npm config get registry; cat "$npm_config_userconfig"; cat ${join(home, '.npmrc')} || echo DENIED`,
        ),
      );
      expect(result.output).toMatch(/^true$/m);
      expect(result.output).toContain('https://registry.example.org/');
      expect(result.output).not.toMatch(/SECRET|c2VjcmV0|cGFzcw/);
      expect(result.output).toContain('DENIED');
    }, 60_000);
  });
});
