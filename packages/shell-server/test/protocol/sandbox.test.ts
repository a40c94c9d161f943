// The sandbox scope end to end: path arguments and working directories outside the scope are
// refused before anything runs (R7.1), and the kernel sandbox (Landlock) stops writes outside it
// even from a shell script (R7.2). Scopes live under /var/tmp, outside the always-writable temp dir.
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  structured,
  textOf,
  type CommandResult,
  type Operations,
  type RunningServer,
  type StartedResult,
} from '../support/harness.js';

/** Runs a sandboxed_shell script (async) and awaits its result (inline or started). */
async function shell(
  server: RunningServer,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<CommandResult> {
  const started = await server.call('sandboxed_shell', { command, ...extra });
  // Refused before anything ran: an error without an operation.
  if (started.structuredContent === undefined) throw new Error(textOf(started));
  const { operation_id } = structured<StartedResult>(started);
  const [finished] = structured<Operations>(
    await server.call('await', { ids: [operation_id] }),
  ).operations;
  if (finished === undefined || finished.status === 'running')
    throw new Error(`${operation_id} did not finish`);
  return finished;
}

describe.concurrent('R7.1 scope checks', { timeout: 60_000 }, () => {
  it('R7.1: a path argument outside the scope (../x, /etc/passwd) is refused with isError, and nothing runs', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    for (const path of ['../x', '/etc/passwd', '..', `${scope.dir}/../elsewhere`]) {
      const result = await server.call('files_show', { path });
      expect(result.isError, path).toBe(true);
      expect(result.structuredContent, path).toMatchObject({
        error: { code: 'PATH_OUTSIDE_SCOPE' },
      });
      expect(textOf(result), path).toMatch(/argument "path": .* is outside the sandbox scope/);
      expect(textOf(result), path).toContain(scope.dir);
    }
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R7.1: a path inside the scope is resolved against the scope and passed as an absolute path', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const result = await server.call('files_show', { path: 'sub/../notes.txt' });
    expect(result.isError).toBe(false);
    expect(structured<CommandResult>(result).output).toBe(`show\n${scope.dir}/notes.txt\n`);
  });

  it('R7.1: a symlink inside the scope that leads outside is refused', async ({ e2e }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    await symlink(outside, join(scope.dir, 'escape'));
    const server = await e2e.inProcess(scope);
    const result = await server.call('files_show', { path: 'escape/secret' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`it resolves to ${outside}/secret`);
  });

  it('R7.1: a working_directory outside the scope is refused with isError, for sandboxed_shell and definition tools', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    await symlink(outside, join(scope.dir, 'escape'));
    const server = await e2e.inProcess(scope);
    for (const working_directory of ['/etc', '..', '../..', outside, 'escape']) {
      const viaShell = await server.call('sandboxed_shell', { command: 'pwd', working_directory });
      expect(viaShell.isError, working_directory).toBe(true);
      expect(textOf(viaShell), working_directory).toMatch(
        /working_directory .* is outside the sandbox scope/,
      );
      const viaTool = await server.call('e2e_sync', { value: 'x', working_directory });
      expect(viaTool.isError, working_directory).toBe(true);
      expect(textOf(viaTool), working_directory).toContain('outside the sandbox scope');
    }
    expect(structured<Operations>(await server.call('status')).operations).toEqual([]);
  });

  it('R7.1: a working_directory inside the scope is used; a missing one is refused', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    await mkdir(join(scope.dir, 'sub'));
    const server = await e2e.inProcess(scope);
    expect((await shell(server, 'pwd', { working_directory: 'sub' })).output).toBe(
      `${scope.dir}/sub\n`,
    );
    expect((await shell(server, 'pwd', { working_directory: `${scope.dir}/sub` })).output).toBe(
      `${scope.dir}/sub\n`,
    );
    expect((await shell(server, 'pwd')).output).toBe(`${scope.dir}\n`);
    const missing = await server.call('sandboxed_shell', {
      command: 'pwd',
      working_directory: 'nope',
    });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('does not exist');
  });

  it('R7.1: the filesystem root is refused as a scope at startup', async ({ e2e }) => {
    const scope = await e2e.scope();
    const result = await e2e.run(['--mode', 'stdio', '--sandbox-scope', '/'], { env: scope.env });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('the sandbox scope cannot be the filesystem root');
  });

  it('R7.1: a scope that does not exist is refused at startup', async ({ e2e }) => {
    const scope = await e2e.scope();
    const result = await e2e.run(
      ['--mode', 'stdio', '--sandbox-scope', join(scope.dir, 'missing')],
      { env: scope.env },
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/sandbox scope .*missing .*does not exist/);
  });
});

describe.concurrent('R7.2 kernel sandbox', { timeout: 60_000 }, () => {
  it('R7.2: a write outside the scope through sandboxed_shell fails with Permission denied and the file does not exist', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const target = join(outside, 'pwned.txt');
    const server = await e2e.inProcess(scope);
    const result = await shell(server, `echo pwned > ${target}`);
    expect(result.status).toBe('failed');
    expect(result.exit_code).not.toBe(0);
    expect(result.output).toContain('Permission denied');
    expect(existsSync(target)).toBe(false);
  });

  it('R7.2, R7.10: deleting, renaming, creating or reading outside the scope fails; the outside tree is untouched', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    await writeFile(join(outside, 'keep.txt'), 'original\n');
    const server = await e2e.inProcess(scope);
    for (const command of [
      `rm -f ${outside}/keep.txt`,
      `mv ${outside}/keep.txt ${outside}/moved.txt`,
      `mkdir ${outside}/newdir`,
      `echo changed >> ${outside}/keep.txt`,
      `cp /etc/hostname ${scope.dir}/copy.txt && ln -s /etc ${outside}/link`,
      // R7.10: and, outside every path the read policy grants, not even read.
      `cat ${outside}/keep.txt`,
    ]) {
      const result = await shell(server, command);
      expect(result.status, command).toBe('failed');
      expect(result.output, command).toMatch(/Permission denied|Operation not permitted/);
    }
    expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('original\n');
    expect(existsSync(join(outside, 'moved.txt'))).toBe(false);
    expect(existsSync(join(outside, 'newdir'))).toBe(false);
    expect(existsSync(join(outside, 'link'))).toBe(false);
    // Reading the system is allowed: the copy into the scope worked before ln was refused.
    expect(await readFile(join(scope.dir, 'copy.txt'), 'utf8')).toBe(
      await readFile('/etc/hostname', 'utf8'),
    );
  });

  it('R7.2: writes inside the scope succeed', async ({ e2e }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const result = await shell(
      server,
      'mkdir -p out && echo inside > out/file.txt && cat out/file.txt',
    );
    expect(result).toMatchObject({ status: 'completed', exit_code: 0, output: 'inside\n' });
    expect(await readFile(join(scope.dir, 'out', 'file.txt'), 'utf8')).toBe('inside\n');
  });

  it('R7.2: the temp directory stays writable (TMPDIR of the server)', async ({ e2e }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const target = join(scope.tempDir, 'scratch.txt');
    const result = await shell(server, `echo scratch > ${target} && cat ${target}`);
    expect(result).toMatchObject({ status: 'completed', output: 'scratch\n' });
  });

  it('R7.2: a definition tool whose argument is not a checked path is still confined by the kernel', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const server = await e2e.inProcess(scope);
    const refused = await server.call('touch', { file: join(outside, 'touched.txt') });
    expect(refused.isError).toBe(true);
    expect(structured<CommandResult>(refused)).toMatchObject({
      tool: 'touch',
      status: 'failed',
      exit_code: 1,
    });
    expect(structured<CommandResult>(refused).output).toContain('Permission denied');
    expect(existsSync(join(outside, 'touched.txt'))).toBe(false);
    const allowed = await server.call('touch', { file: 'touched.txt' });
    expect(structured<CommandResult>(allowed)).toMatchObject({ status: 'completed', exit_code: 0 });
    expect(existsSync(join(scope.dir, 'touched.txt'))).toBe(true);
  });

  it('R7.2: a node process started from the sandbox cannot write outside either', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const server = await e2e.inProcess(scope);
    const result = await shell(
      server,
      `node -e "require('fs').writeFileSync('${outside}/node.txt', 'x')"`,
    );
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(/EACCES|permission denied/i);
    expect(existsSync(join(outside, 'node.txt'))).toBe(false);
  });
});
