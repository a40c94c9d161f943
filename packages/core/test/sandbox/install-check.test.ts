// R7.6 (Ahma itself inside the scope): code that runs unconfined — the server's packages, every
// dependency they resolve, the sandbox helper, node — must not lie where commands can write, or a
// command rewrites it and the rewrite runs unconfined at the next start. Checked on real paths, as
// spelled and as resolved, before the helper first runs; refused with the fix.
import { existsSync } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine.js';
import { checkInstallLocation, packageClosure } from '../../src/sandbox/install-check.js';
import { writablePaths } from '../../src/sandbox/sandbox.js';
import { refusal, removeAll, varTmpDir } from '../support/engine.js';

const SHELL_SERVER = fileURLToPath(new URL('../../../shell-server', import.meta.url));

let scope: string;
let outside: string;
let root: string;

beforeEach(async () => {
  scope = await varTmpDir('scope');
  outside = await varTmpDir('outside');
  root = await varTmpDir('root');
});

afterEach(() => removeAll([scope, outside, root]));

describe('R7.6: Ahma installed inside a writable path is refused', () => {
  it('R7.6: code inside the scope is refused with the fix; code outside passes', async () => {
    const writable = await writablePaths({ scope });
    const inside = join(scope, 'node_modules', '@ahma', 'shell-server');
    await mkdir(inside, { recursive: true });
    const error = await refusal(
      checkInstallLocation([{ path: inside, label: 'the server package' }], writable),
    );
    expect(error.code).toBe('INSTALL_UNSAFE');
    expect(error.message).toContain(`${inside} (the server package) is inside the sandbox scope`);
    expect(error.message).toContain(
      'npm install -g @ahma/shell-server, or npx -y @ahma/shell-server',
    );
    await expect(
      checkInstallLocation([{ path: outside, label: 'the server package' }], writable),
    ).resolves.toBeUndefined();
  });

  it('R7.6: a link inside the scope to code outside is refused too (a command can re-point it)', async () => {
    const writable = await writablePaths({ scope });
    const link = join(scope, 'ahma');
    await symlink(outside, link);
    const error = await refusal(
      checkInstallLocation([{ path: link, label: 'the server package' }], writable),
    );
    expect(error.message).toContain(`${link} (the server package) is inside the sandbox scope`);
  });

  it('R7.6: the temp directory and extra writable paths count as much as the scope', async () => {
    const writable = await writablePaths({ scope, extraWritable: [outside] });
    const error = await refusal(
      checkInstallLocation([{ path: join(outside), label: 'node' }], writable),
    );
    expect(error.message).toContain('is inside an extra writable path');
    await expect(
      writablePaths({ scope }).then((paths) => paths.map((entry) => entry.label)),
    ).resolves.toEqual(expect.arrayContaining(['the sandbox scope', 'the temp directory']));
  });

  it("R7.6: packageClosure resolves the server's real runtime dependencies the way Node does", async () => {
    const closure = packageClosure(SHELL_SERVER);
    const labels = new Set(closure.map((entry) => entry.label));
    for (const name of [
      '@ahma/shell-server',
      '@ahma/core',
      '@modelcontextprotocol/sdk',
      'pino',
      'ajv',
      'zod',
    ]) {
      expect(labels.has(`the package ${name}`), name).toBe(true);
    }
    // Every entry exists: a path, as spelled (pnpm links) and as resolved.
    expect(closure.every((entry) => existsSync(join(entry.path, 'package.json')))).toBe(true);
  });

  it('R7.6: createEngine refuses before the helper ever runs, and creates no state', async () => {
    // A stand-in helper that would leave a mark if it ran (the probe runs it unconfined).
    const mark = join(outside, 'helper-ran');
    const helperPath = join(scope, 'ahma-sandbox');
    await writeFile(helperPath, `#!/bin/sh\ntouch '${mark}'\necho landlock-abi=6\n`);
    await chmod(helperPath, 0o755);
    const error = await refusal(
      createEngine({
        scope,
        stateDir: root,
        helperPath,
        noShellPool: true,
        codePaths: [{ path: outside, label: 'the server package' }],
      }),
    );
    expect(error.code).toBe('INSTALL_UNSAFE');
    expect(error.message).toContain(
      `${helperPath} (the sandbox helper) is inside the sandbox scope`,
    );
    expect(existsSync(mark)).toBe(false);
    expect(existsSync(join(root, 'servers'))).toBe(false);
  });

  it('R7.6: without codePaths (a library embedding core) or with noSandbox, nothing is checked', async () => {
    const code = [{ path: scope, label: 'the server package' }];
    const unconfined = await createEngine({
      scope,
      stateDir: root,
      noShellPool: true,
      noSandbox: true,
      codePaths: code,
    });
    expect(unconfined.sandbox.warnings.join('\n')).toMatch(
      /--no-sandbox: .*UNCONFINED.*the check that refuses an Ahma installed inside a writable path is skipped/,
    );
    await unconfined.close();
    const confined = await refusal(
      createEngine({ scope, stateDir: root, noShellPool: true, codePaths: code }),
    );
    expect(confined.code).toBe('INSTALL_UNSAFE');
  });
});
