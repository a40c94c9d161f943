// resolveExecutable (FR6.2 at registration, EC3 at every call): an absolute path, a path relative
// to the scope (it has a "/"), or a bare name looked up on PATH; always a regular file this process
// may execute. Real files, real permission bits.
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveExecutable } from '../../src/registry/exec.js';
import { refusal, removeDir, tempDir, writeExecutable } from './helpers.js';

// Layout:
//   root/scope/scripts/greet.sh     executable
//   root/scope/scripts/plain.txt    not executable (0644)
//   root/scope/scripts/dir/         a directory
//   root/scope/local-tool           executable, only in the scope
//   root/scope/link-to-greet -> scripts/greet.sh
//   root/bin1/tool                  not executable
//   root/bin2/tool                  executable
//   root/bin3/tool                  executable (later on PATH than bin2)
//   root/outside/elsewhere.sh       executable, outside the scope
let root = '';
let scope = '';

beforeAll(async () => {
  root = await tempDir('exec');
  scope = join(root, 'scope');
  await writeExecutable(join(scope, 'scripts', 'greet.sh'));
  await writeFile(join(scope, 'scripts', 'plain.txt'), 'not a program\n', { mode: 0o644 });
  await mkdir(join(scope, 'scripts', 'dir'));
  await writeExecutable(join(scope, 'local-tool'));
  await symlink('scripts/greet.sh', join(scope, 'link-to-greet'));
  await mkdir(join(root, 'bin1'));
  await writeFile(join(root, 'bin1', 'tool'), '#!/bin/sh\n', { mode: 0o644 });
  await writeExecutable(join(root, 'bin2', 'tool'));
  await writeExecutable(join(root, 'bin3', 'tool'));
  await writeExecutable(join(root, 'outside', 'elsewhere.sh'));
});

afterAll(async () => {
  await removeDir(root);
});

const lookup = (path: string | undefined = process.env['PATH']) => ({ scope, path });

describe('resolveExecutable: paths', () => {
  it('FR6.2: an absolute path to an executable file is itself', async () => {
    const file = join(scope, 'scripts', 'greet.sh');
    await expect(resolveExecutable(file, lookup())).resolves.toBe(file);
    await expect(resolveExecutable(join(root, 'outside', 'elsewhere.sh'), lookup())).resolves.toBe(
      join(root, 'outside', 'elsewhere.sh'),
    );
  });

  it('FR6.2: a relative path with a "/" is relative to the scope, not to the process\'s cwd', async () => {
    const expected = join(scope, 'scripts', 'greet.sh');
    await expect(resolveExecutable('./scripts/greet.sh', lookup())).resolves.toBe(expected);
    await expect(resolveExecutable('scripts/greet.sh', lookup())).resolves.toBe(expected);
    await expect(resolveExecutable('./scripts/../scripts/greet.sh', lookup())).resolves.toBe(
      expected,
    );
    expect(process.cwd()).not.toBe(scope);
  });

  it('FR6.2: a symlink to an executable is accepted (the path, not its target, is run)', async () => {
    await expect(resolveExecutable('./link-to-greet', lookup())).resolves.toBe(
      join(scope, 'link-to-greet'),
    );
  });

  it('FR6.2: a path that does not exist is EXEC_NOT_FOUND, naming the path tried', async () => {
    await refusal(
      resolveExecutable('./scripts/missing.sh', lookup()),
      'EXEC_NOT_FOUND',
      `exec ./scripts/missing.sh: ${join(scope, 'scripts', 'missing.sh')} does not exist`,
    );
    await refusal(
      resolveExecutable('/nonexistent/tool', lookup()),
      'EXEC_NOT_FOUND',
      'exec /nonexistent/tool: /nonexistent/tool does not exist',
    );
  });

  it('FR6.2: a file without execute permission is EXEC_NOT_FOUND, saying to chmod +x it', async () => {
    const error = await refusal(
      resolveExecutable('./scripts/plain.txt', lookup()),
      'EXEC_NOT_FOUND',
    );
    expect(error.message).toBe(
      `exec ./scripts/plain.txt: ${join(scope, 'scripts', 'plain.txt')} is not executable (chmod +x it)`,
    );
  });

  it('FR6.2: a directory is not an executable, even though it has the x bit', async () => {
    const error = await refusal(resolveExecutable('./scripts/dir', lookup()), 'EXEC_NOT_FOUND');
    expect(error.message).toBe(
      `exec ./scripts/dir: ${join(scope, 'scripts', 'dir')} is not a file`,
    );
  });
});

describe('resolveExecutable: bare names on PATH', () => {
  it('FR6.2: a bare name is found on PATH (wc)', async () => {
    const found = await resolveExecutable('wc', lookup());
    expect(found.endsWith('/wc')).toBe(true);
  });

  it('FR6.2: PATH is searched in order, skipping a file of that name that is not executable', async () => {
    const path = [join(root, 'bin1'), join(root, 'bin2'), join(root, 'bin3')].join(':');
    await expect(resolveExecutable('tool', lookup(path))).resolves.toBe(join(root, 'bin2', 'tool'));
    const reversed = [join(root, 'bin3'), join(root, 'bin2')].join(':');
    await expect(resolveExecutable('tool', lookup(reversed))).resolves.toBe(
      join(root, 'bin3', 'tool'),
    );
  });

  it('FR6.2: relative and empty PATH entries are ignored (they would depend on the cwd)', async () => {
    const path = ['', '.', 'bin2', join(root, 'nothing-here')].join(':');
    await refusal(
      resolveExecutable('tool', { scope: root, path }),
      'EXEC_NOT_FOUND',
      'exec tool: no executable of that name on PATH',
    );
  });

  it('FR6.2: without PATH a bare name is not found', async () => {
    await refusal(resolveExecutable('wc', { scope, path: undefined }), 'EXEC_NOT_FOUND');
    await refusal(resolveExecutable('wc', lookup('')), 'EXEC_NOT_FOUND');
  });

  it('FR6.2: a bare name that is only in the scope is not run from there; the message says to write ./name', async () => {
    const error = await refusal(
      resolveExecutable('local-tool', lookup(join(root, 'bin2'))),
      'EXEC_NOT_FOUND',
    );
    expect(error.message).toBe(
      'exec local-tool: no executable of that name on PATH; the file in the sandbox scope is named with a path: ./local-tool',
    );
    await expect(resolveExecutable('./local-tool', lookup())).resolves.toBe(
      join(scope, 'local-tool'),
    );
  });

  it('FR6.2: no hint when the file in the scope could not run either', async () => {
    await writeFile(join(scope, 'not-runnable'), 'x', { mode: 0o644 });
    const error = await refusal(
      resolveExecutable('not-runnable', lookup(join(root, 'bin2'))),
      'EXEC_NOT_FOUND',
    );
    expect(error.message).toBe('exec not-runnable: no executable of that name on PATH');
  });

  it('EC3: an executable that loses its x bit or disappears is refused from then on', async () => {
    const file = await writeExecutable(join(scope, 'scripts', 'fleeting.sh'));
    await expect(resolveExecutable('./scripts/fleeting.sh', lookup())).resolves.toBe(file);
    await chmod(file, 0o644);
    await refusal(
      resolveExecutable('./scripts/fleeting.sh', lookup()),
      'EXEC_NOT_FOUND',
      'is not executable',
    );
    await removeDir(file);
    await refusal(
      resolveExecutable('./scripts/fleeting.sh', lookup()),
      'EXEC_NOT_FOUND',
      'does not exist',
    );
  });
});
