import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePathInScope, resolveWorkingDirectory } from '../../src/argv/paths.js';
import { refusal } from '../support/refusal.js';

// Layout (all real, under one temp root):
//   root/scope/                      the sandbox scope
//   root/scope/sub/dir/              a nested directory
//   root/scope/file.txt              a file
//   root/scope/link-in -> sub        symlink inside → inside
//   root/scope/link-out -> ../outside           symlink inside → outside dir
//   root/scope/link-out-file -> ../outside/secret.txt
//   root/scope/dangling-out -> <root>/outside/not-yet   dangling, outside (absolute)
//   root/scope/dangling-out-rel -> ../outside/new       dangling, outside (relative)
//   root/scope/dangling-in -> sub/not-yet              dangling, inside
//   root/scope/chain -> link-out                       symlink → symlink → outside
//   root/scope/loop-a <-> loop-b                       a symlink loop
//   root/outside/secret.txt
//   root/scope-evil/                 a sibling whose name has the scope as a prefix
//   root/scope-alias -> scope        the scope reached through a symlink
let root = '';
let scope = '';
let outside = '';

beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ahma-paths-')));
  scope = join(root, 'scope');
  outside = join(root, 'outside');
  await mkdir(join(scope, 'sub', 'dir'), { recursive: true });
  await mkdir(outside);
  await mkdir(join(root, 'scope-evil'));
  await writeFile(join(scope, 'file.txt'), 'inside');
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await symlink('sub', join(scope, 'link-in'));
  await symlink('../outside', join(scope, 'link-out'));
  await symlink('../outside/secret.txt', join(scope, 'link-out-file'));
  await symlink(join(outside, 'not-yet'), join(scope, 'dangling-out'));
  await symlink('../outside/new', join(scope, 'dangling-out-rel'));
  await symlink('sub/not-yet', join(scope, 'dangling-in'));
  await symlink('link-out', join(scope, 'chain'));
  await symlink('loop-b', join(scope, 'loop-a'));
  await symlink('loop-a', join(scope, 'loop-b'));
  await symlink('scope', join(root, 'scope-alias'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('resolvePathInScope: accepted paths', () => {
  it('SPEC §2 format path: a relative path inside the scope resolves to an absolute path', async () => {
    expect(await resolvePathInScope('file.txt', scope, scope, 'target')).toBe(
      join(scope, 'file.txt'),
    );
    expect(await resolvePathInScope('./sub/dir', scope, scope, 'target')).toBe(
      join(scope, 'sub', 'dir'),
    );
  });

  it('SPEC §2 format path: relative paths resolve against the given base (the working directory)', async () => {
    const base = join(scope, 'sub');
    expect(await resolvePathInScope('dir/x', base, scope, 'target')).toBe(
      join(scope, 'sub', 'dir', 'x'),
    );
    expect(await resolvePathInScope('../file.txt', base, scope, 'target')).toBe(
      join(scope, 'file.txt'),
    );
  });

  it('SPEC §2 format path: an absolute path inside the scope is accepted as is', async () => {
    const inside = join(scope, 'sub', 'dir');
    expect(await resolvePathInScope(inside, join(scope, 'sub'), scope, 'target')).toBe(inside);
  });

  it('SPEC §2 format path: ".." that stays inside the scope is accepted and normalised', async () => {
    expect(await resolvePathInScope('sub/dir/../../file.txt', scope, scope, 'target')).toBe(
      join(scope, 'file.txt'),
    );
  });

  it('SPEC §2 format path: non-existent files (and directories) inside the scope are accepted', async () => {
    expect(await resolvePathInScope('new.txt', scope, scope, 'out')).toBe(join(scope, 'new.txt'));
    expect(await resolvePathInScope('a/b/c/new.txt', scope, scope, 'out')).toBe(
      join(scope, 'a', 'b', 'c', 'new.txt'),
    );
  });

  it('R7.1: the scope itself is accepted ("." and its absolute path)', async () => {
    expect(await resolvePathInScope('.', scope, scope, 'dir')).toBe(scope);
    expect(await resolvePathInScope(scope, scope, scope, 'dir')).toBe(scope);
    expect(await resolvePathInScope('sub/..', scope, scope, 'dir')).toBe(scope);
  });

  it('SPEC §2 format path: a symlink inside the scope pointing inside is accepted', async () => {
    expect(await resolvePathInScope('link-in/dir', scope, scope, 'target')).toBe(
      join(scope, 'link-in', 'dir'),
    );
    expect(await resolvePathInScope('link-in/new.txt', scope, scope, 'target')).toBe(
      join(scope, 'link-in', 'new.txt'),
    );
  });

  it('SPEC §2 format path: a dangling symlink pointing inside the scope is accepted', async () => {
    expect(await resolvePathInScope('dangling-in', scope, scope, 'target')).toBe(
      join(scope, 'dangling-in'),
    );
  });

  it('R7.1: a scope given through a symlinked path still works', async () => {
    const alias = join(root, 'scope-alias');
    expect(await resolvePathInScope('file.txt', alias, alias, 'target')).toBe(
      join(alias, 'file.txt'),
    );
    expect(await resolvePathInScope('new/x', alias, alias, 'target')).toBe(join(alias, 'new', 'x'));
    // The real path and the alias both name the same scope.
    expect(await resolvePathInScope(join(scope, 'file.txt'), alias, alias, 'target')).toBe(
      join(scope, 'file.txt'),
    );
    expect(await resolvePathInScope(join(alias, 'sub'), scope, scope, 'target')).toBe(
      join(alias, 'sub'),
    );
    await refusal(
      resolvePathInScope('../outside/secret.txt', alias, alias, 'target'),
      'PATH_OUTSIDE_SCOPE',
    );
  });
});

describe('resolvePathInScope: refused paths', () => {
  it('R7.1: ".." escaping the scope is refused with a message naming the argument', async () => {
    const error = await refusal(
      resolvePathInScope('../outside/secret.txt', scope, scope, 'target'),
      'PATH_OUTSIDE_SCOPE',
      'argument "target"',
      '../outside/secret.txt',
      scope,
    );
    expect(error.name).toBe('AhmaError');
    await refusal(
      resolvePathInScope('..', scope, scope, 'dir'),
      'PATH_OUTSIDE_SCOPE',
      'argument "dir"',
    );
    await refusal(
      resolvePathInScope('sub/../../outside', scope, scope, 'dir'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(
      resolvePathInScope('../../../../../../../../etc/passwd', join(scope, 'sub'), scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
  });

  it('R7.1: an absolute path outside the scope is refused', async () => {
    await refusal(
      resolvePathInScope('/etc/passwd', scope, scope, 'file'),
      'PATH_OUTSIDE_SCOPE',
      'argument "file"',
      '/etc/passwd',
    );
    await refusal(
      resolvePathInScope(join(outside, 'secret.txt'), scope, scope, 'file'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(resolvePathInScope('/', scope, scope, 'file'), 'PATH_OUTSIDE_SCOPE');
  });

  it('R7.1: a sibling directory whose name starts with the scope name is refused', async () => {
    await refusal(
      resolvePathInScope(join(root, 'scope-evil', 'x'), scope, scope, 'file'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(resolvePathInScope('../scope-evil', scope, scope, 'file'), 'PATH_OUTSIDE_SCOPE');
  });

  it('R7.1: a symlink inside the scope pointing to an existing directory outside is refused', async () => {
    const error = await refusal(
      resolvePathInScope('link-out', scope, scope, 'target'),
      'PATH_OUTSIDE_SCOPE',
      'argument "target"',
      `resolves to ${outside}`,
    );
    expect(error.cause).toEqual({ path: join(scope, 'link-out'), real: outside });
  });

  it('R7.1: a symlink inside the scope pointing to an existing file outside is refused', async () => {
    await refusal(
      resolvePathInScope('link-out-file', scope, scope, 'target'),
      'PATH_OUTSIDE_SCOPE',
      join(outside, 'secret.txt'),
    );
  });

  it('R7.1: a dangling symlink pointing outside is refused (absolute and relative targets)', async () => {
    await refusal(
      resolvePathInScope('dangling-out', scope, scope, 'target'),
      'PATH_OUTSIDE_SCOPE',
      join(outside, 'not-yet'),
    );
    await refusal(
      resolvePathInScope('dangling-out-rel', scope, scope, 'target'),
      'PATH_OUTSIDE_SCOPE',
      join(outside, 'new'),
    );
  });

  it('R7.1: a path under a symlinked directory pointing outside is refused (existing or not)', async () => {
    await refusal(
      resolvePathInScope('link-out/secret.txt', scope, scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(resolvePathInScope('link-out/new.txt', scope, scope, 'f'), 'PATH_OUTSIDE_SCOPE');
    await refusal(
      resolvePathInScope('link-out/a/b/c.txt', scope, scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(
      resolvePathInScope(join(scope, 'link-out', 'new.txt'), scope, scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
    await refusal(
      resolvePathInScope('dangling-out/deeper/x', scope, scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
  });

  it('R7.1: a chain of symlinks ending outside is refused', async () => {
    await refusal(resolvePathInScope('chain/new', scope, scope, 'f'), 'PATH_OUTSIDE_SCOPE');
  });

  it('R7.1: a working directory that is itself a symlink out of the scope does not let paths escape', async () => {
    await refusal(
      resolvePathInScope('secret.txt', join(scope, 'link-out'), scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
    );
  });

  it('R7.1: a dangling symlink whose target climbs out through another symlink is refused', async () => {
    // scope/trap/inner -> <outside>/deep ; scope/trap/escape -> "inner/../landed" (dangling).
    // The kernel resolves "inner" first, so writing to scope/trap/escape creates
    // <outside>/landed, even though "inner/../landed" looks lexically like scope/trap/landed.
    const trap = join(scope, 'trap');
    await mkdir(trap);
    await mkdir(join(outside, 'deep'));
    await symlink(join(outside, 'deep'), join(trap, 'inner'));
    await symlink('inner/../landed', join(trap, 'escape'));
    await refusal(
      resolvePathInScope('trap/escape', scope, scope, 'f'),
      'PATH_OUTSIDE_SCOPE',
      join(outside, 'landed'),
    );
    await refusal(resolvePathInScope('trap/escape/x', scope, scope, 'f'), 'PATH_OUTSIDE_SCOPE');
    // The kernel agrees: writing through the link lands outside the scope.
    await writeFile(join(trap, 'escape'), 'escaped');
    expect(await readFile(join(outside, 'landed'), 'utf8')).toBe('escaped');
    await refusal(resolvePathInScope('trap/escape', scope, scope, 'f'), 'PATH_OUTSIDE_SCOPE');
  });

  it('SPEC §2 format path: a symlink loop is refused as an invalid path', async () => {
    await refusal(
      resolvePathInScope('loop-a', scope, scope, 'f'),
      'PATH_INVALID',
      'too many levels of symbolic links',
    );
  });

  it('SPEC §2 format path: an empty path is PATH_INVALID, naming the argument', async () => {
    await refusal(
      resolvePathInScope('', scope, scope, 'target'),
      'PATH_INVALID',
      'argument "target"',
      'empty',
    );
  });

  it('SPEC §2 format path: a NUL byte is PATH_INVALID, naming the argument', async () => {
    await refusal(
      resolvePathInScope('file.txt\0/etc/passwd', scope, scope, 'target'),
      'PATH_INVALID',
      'argument "target"',
      'NUL',
    );
    await refusal(resolvePathInScope('\0', scope, scope, 'x'), 'PATH_INVALID');
  });
});

describe('resolveWorkingDirectory', () => {
  it('R10.3: the default is the real path of the scope', async () => {
    expect(await resolveWorkingDirectory(undefined, scope)).toBe(scope);
    expect(await resolveWorkingDirectory('', scope)).toBe(scope);
    expect(await resolveWorkingDirectory(undefined, join(root, 'scope-alias'))).toBe(scope);
  });

  it('R10.3: a relative working_directory resolves against the scope and returns its real path', async () => {
    expect(await resolveWorkingDirectory('sub', scope)).toBe(join(scope, 'sub'));
    expect(await resolveWorkingDirectory('sub/dir', scope)).toBe(join(scope, 'sub', 'dir'));
    expect(await resolveWorkingDirectory('./sub/dir/..', scope)).toBe(join(scope, 'sub'));
    expect(await resolveWorkingDirectory('.', scope)).toBe(scope);
    expect(await resolveWorkingDirectory('link-in', scope)).toBe(join(scope, 'sub'));
    expect(await resolveWorkingDirectory('sub', join(root, 'scope-alias'))).toBe(
      join(scope, 'sub'),
    );
  });

  it('R10.3: an absolute working_directory inside the scope is accepted', async () => {
    expect(await resolveWorkingDirectory(join(scope, 'sub', 'dir'), scope)).toBe(
      join(scope, 'sub', 'dir'),
    );
    expect(await resolveWorkingDirectory(join(root, 'scope-alias', 'sub'), scope)).toBe(
      join(scope, 'sub'),
    );
  });

  it('R7.1: a working_directory outside the scope is refused: the scope cannot be widened', async () => {
    await refusal(
      resolveWorkingDirectory('..', scope),
      'PATH_OUTSIDE_SCOPE',
      'working_directory',
      scope,
    );
    await refusal(resolveWorkingDirectory('../outside', scope), 'PATH_OUTSIDE_SCOPE', '../outside');
    await refusal(resolveWorkingDirectory('/', scope), 'PATH_OUTSIDE_SCOPE');
    await refusal(resolveWorkingDirectory(outside, scope), 'PATH_OUTSIDE_SCOPE');
    await refusal(resolveWorkingDirectory(join(root, 'scope-evil'), scope), 'PATH_OUTSIDE_SCOPE');
  });

  it('R7.1: a working_directory through a symlink pointing outside is refused', async () => {
    await refusal(resolveWorkingDirectory('link-out', scope), 'PATH_OUTSIDE_SCOPE', 'link-out');
    await refusal(resolveWorkingDirectory('chain', scope), 'PATH_OUTSIDE_SCOPE');
    // Outside wins over "does not exist": the agent learns the real reason.
    await refusal(resolveWorkingDirectory('dangling-out', scope), 'PATH_OUTSIDE_SCOPE');
  });

  it('R10.3: a missing directory is WORKING_DIRECTORY_INVALID', async () => {
    await refusal(
      resolveWorkingDirectory('does/not/exist', scope),
      'WORKING_DIRECTORY_INVALID',
      'does/not/exist',
      'does not exist',
    );
    await refusal(
      resolveWorkingDirectory('dangling-in', scope),
      'WORKING_DIRECTORY_INVALID',
      'does not exist',
    );
  });

  it('R10.3: a file is WORKING_DIRECTORY_INVALID', async () => {
    await refusal(
      resolveWorkingDirectory('file.txt', scope),
      'WORKING_DIRECTORY_INVALID',
      'file.txt',
      'is not a directory',
    );
  });
});
