// R7.6 (Ahma itself inside the scope), with the built server: when the server's own code — its
// JavaScript, its dependencies, the ahma-sandbox helper — lies where commands can write, a command
// could rewrite it and the rewrite would run unconfined at the next start. The server refuses to
// start, with the fix, before it runs anything; the same copy installed outside the scope serves.
// The tests run at once, each with its own directories.
import { existsSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  FIXTURES,
  it,
  PACKAGE_DIR,
  readLog,
  structured,
  type CommandResult,
} from '../support/harness.js';

/** The checkout this suite runs from (whatever its location: CI may clone under /tmp). */
const REPOSITORY = join(PACKAGE_DIR, '..', '..');
const CORE_DIR = join(REPOSITORY, 'packages', 'core');
const FIX = 'npm install -g @ahma/shell-server, or npx -y @ahma/shell-server';

/** Installs copies of the built @ahma/shell-server and @ahma/core in `dir`/node_modules/@ahma. */
async function installCopy(dir: string): Promise<string> {
  const scoped = join(dir, 'node_modules', '@ahma');
  await mkdir(scoped, { recursive: true });
  for (const part of ['bin', 'dist', 'package.json']) {
    await cp(join(PACKAGE_DIR, part), join(scoped, 'shell-server', part), { recursive: true });
  }
  for (const part of ['dist', 'package.json']) {
    await cp(join(CORE_DIR, part), join(scoped, 'core', part), { recursive: true });
  }
  return join(scoped, 'shell-server', 'bin', 'ahma-shell.js');
}

describe.concurrent(
  'R7.6: Ahma refuses to start from inside a writable path',
  { timeout: 60_000 },
  () => {
    it('R7.6: a scope containing the checkout (the server, core, their dependencies) is refused with the fix', async ({
      e2e,
    }) => {
      const scope = await e2e.scope();
      const result = await e2e.run(['--mode', 'stdio', '--sandbox-scope', REPOSITORY], {
        cwd: scope.dir,
        env: scope.env,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'Ahma refuses to start: its own code lies where sandboxed commands can write',
      );
      expect(result.stderr).toMatch(
        /\/packages\/shell-server \(the package @ahma\/shell-server\) is inside the sandbox scope/,
      );
      expect(result.stderr).toContain(FIX);
      // Refused before anything was created or run.
      expect(existsSync(scope.stateRoot)).toBe(false);
    });

    it("R7.6: a copy installed in the project's node_modules refuses that project as its scope, and serves any other", async ({
      e2e,
    }) => {
      const project = await e2e.scope();
      const bin = await installCopy(project.dir);
      const refused = await e2e.runCommand(
        process.execPath,
        [bin, '--mode', 'stdio', '--sandbox-scope', project.dir],
        { cwd: project.dir, env: project.env },
      );
      expect(refused.code).toBe(1);
      const installed = join(project.dir, 'node_modules', '@ahma');
      expect(refused.stderr).toContain(
        `${installed}/shell-server (the package @ahma/shell-server) is inside the sandbox scope ${project.dir}`,
      );
      expect(refused.stderr).toContain(
        `${installed}/core/dist/native/${process.platform}-${process.arch}/ahma-sandbox (the sandbox helper) is inside the sandbox scope`,
      );
      expect(refused.stderr).toContain(FIX);

      // The very same copy, with the scope elsewhere: its code is outside every writable path.
      const elsewhere = await e2e.scope();
      const server = await e2e.server(elsewhere, ['--sync'], bin);
      const result = structured<CommandResult>(
        await server.call('sandboxed_shell', { command: 'echo served' }),
      );
      expect(result).toMatchObject({ status: 'completed', output: 'served\n' });
    });

    it('R7.6: --no-sandbox skips the check (nothing is protected then) and says so', async ({
      e2e,
    }) => {
      const scope = await e2e.scope();
      const server = await e2e.server({ ...scope, dir: REPOSITORY }, [
        '--no-sandbox',
        '--tools-dir',
        join(FIXTURES, 'tools'),
      ]);
      expect((await server.client.listTools()).tools.length).toBeGreaterThan(0);
      const { text } = await readLog(scope);
      expect(text).toContain(
        'the check that refuses an Ahma installed inside a writable path is skipped',
      );
    });
  },
);
