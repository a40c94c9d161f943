// SPEC §2 Compatibility: the Rust ahma's own tool files (core's test/fixtures/upstream-ahma,
// unmodified) served by the server (in this process, with the SDK's real Client), their
// file-tools and git tools run for real in the Landlock sandbox. The server runs with --sync so
// every call answers with its finished result, however results are delivered otherwise.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import {
  it,
  PACKAGE_DIR,
  readLog,
  structured,
  textOf,
  type CommandResult,
  type E2E,
  type Scope,
} from '../support/harness.js';

const UPSTREAM = join(PACKAGE_DIR, '..', 'core', 'test', 'fixtures', 'upstream-ahma');

async function upstreamScope(e2e: E2E): Promise<Scope> {
  const scope = await e2e.scope({ noTools: true });
  for (const name of readdirSync(UPSTREAM).filter((file) => file.endsWith('.json'))) {
    await cp(join(UPSTREAM, name), join(scope.dir, '.ahma', 'tools', name));
  }
  return scope;
}

/** Whether `program` is an executable file on PATH (what the server's lookup finds). */
function installed(program: string): boolean {
  return (process.env['PATH'] ?? '').split(':').some((dir) => {
    const file = join(dir, program);
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

describe.concurrent(
  'SPEC §2 compat: upstream ahma tool files through the server',
  { timeout: 60_000 },
  () => {
    it('SPEC §2 compat: their tools list; each file-tools leaf exactly when its program is installed', async ({
      e2e,
    }) => {
      const scope = await upstreamScope(e2e);
      const server = await e2e.inProcess(scope, ['--sync']);
      const names = (await server.client.listTools()).tools.map((tool) => tool.name);
      const fileTools = JSON.parse(readFileSync(join(UPSTREAM, 'file-tools.json'), 'utf8')) as {
        subcommand: { name: string }[];
      };
      for (const { name } of fileTools.subcommand) {
        expect(names.includes(`file-tools_${name}`), name).toBe(installed(name));
      }
      expect(names).toEqual(
        expect.arrayContaining([
          'git_status',
          'git_add',
          'git_commit',
          'git_log',
          'file-tools_grep',
        ]),
      );
      // The livelog monitors list when their source program is installed (tail is; adb is not here).
      expect(names.includes('rust-log-monitor')).toBe(installed('tail'));
      expect(names.includes('android-logcat')).toBe(installed('adb'));
      if (installed('cargo')) expect(names).toContain('cargo_build');
      if (installed('gh')) expect(names).toContain('gh_pr_create');
      // Every file loads: none is rejected; warnings are logged and the file loads.
      const log = await readLog(scope);
      const files = (message: RegExp) =>
        [
          ...new Set(
            log.lines
              .filter((line) => message.test(String(line['msg'])))
              .map((line) => String(line['file']).split('/').at(-1)),
          ),
        ].sort();
      expect(files(/^tool definition rejected/)).toEqual([]);
      // Their `concurrency` is a key Ahma uses (the workspace lane): only python's unknown
      // guidance keys warn.
      expect(files(/^tool definition warning \(loaded\)/)).toEqual(['python.json']);
    });

    it('SPEC §2 compat: file-tools ls and grep run as argv in the sandbox; a ";" in a pattern never reaches a shell', async ({
      e2e,
    }) => {
      const scope = await upstreamScope(e2e);
      await writeFile(join(scope.dir, 'notes.txt'), 'first line\nx; touch PWNED\n');
      const server = await e2e.inProcess(scope, ['--sync']);

      const ls = await server.call('file-tools_ls', { long: true, path: '.' });
      expect(ls.isError, textOf(ls)).toBeFalsy();
      expect(structured<CommandResult>(ls).output).toMatch(/-rw.* notes\.txt/);

      const grep = await server.call('file-tools_grep', {
        pattern: 'x; touch PWNED',
        files: ['notes.txt'],
        'line-number': true,
      });
      expect(grep.isError, textOf(grep)).toBeFalsy();
      expect(structured<CommandResult>(grep).output).toBe('2:x; touch PWNED\n');

      const miss = await server.call('file-tools_grep', {
        pattern: 'nothing; touch PWNED',
        files: ['notes.txt'],
      });
      expect(structured<CommandResult>(miss).exit_code).toBe(1);
      expect(existsSync(join(scope.dir, 'PWNED'))).toBe(false);

      const outside = await server.call('file-tools_grep', {
        pattern: 'root',
        files: ['/etc/passwd'],
      });
      expect(outside.isError).toBe(true);
      expect(textOf(outside)).toMatch(/outside the sandbox scope/);
    });

    it('SPEC §2 compat: git tools run for real: status, add, commit (message through -F), log', async ({
      e2e,
    }) => {
      const scope = await upstreamScope(e2e);
      const git = (...args: string[]) =>
        execFileSync('git', args, { cwd: scope.dir, env: scope.env, encoding: 'utf8' });
      git('init', '-q');
      git('config', 'user.name', 'Ahma E2E');
      git('config', 'user.email', 'e2e@example.invalid');
      await writeFile(join(scope.dir, 'a.txt'), 'a\n');
      const server = await e2e.inProcess(scope, ['--sync']);

      const status = await server.call('git_status', { short: true });
      expect(structured<CommandResult>(status).output).toContain('?? a.txt');
      const add = await server.call('git_add', { pathspec: 'a.txt' });
      expect(add.isError, textOf(add)).toBeFalsy();
      const commit = await server.call('git_commit', { message: 'first; touch PWNED\n\nbody' });
      expect(commit.isError, textOf(commit)).toBeFalsy();
      const log = await server.call('git_log', { oneline: true });
      expect(structured<CommandResult>(log).output).toMatch(/^[0-9a-f]+ first; touch PWNED\n$/);
      expect(existsSync(join(scope.dir, 'PWNED'))).toBe(false);
    });

    it('SPEC §2 compat, R9: the one-shot CLI runs an upstream tool with an array of paths', async ({
      e2e,
    }) => {
      const scope = await upstreamScope(e2e);
      await writeFile(join(scope.dir, 'notes.txt'), 'hello\n');
      const result = await e2e.run(
        [
          '--sandbox-scope',
          scope.dir,
          '--tool_name',
          'file-tools_grep',
          '--tool_args',
          JSON.stringify({ pattern: 'hello', files: ['notes.txt'] }),
        ],
        { cwd: scope.dir, env: scope.env },
      );
      expect(result.stderr).not.toMatch(/strict mode|at .*\.js:\d+/);
      expect(result.stdout).toBe('hello\n');
      expect(result.code).toBe(0);
    });
  },
);

describe.concurrent(
  'SPEC §2 compat: shells with flags or through env, end to end',
  { timeout: 60_000 },
  () => {
    /** A scope holding a planted executable `ls` and a tool `files` whose command is `command`. */
    async function plantedScope(e2e: E2E, command: string): Promise<Scope> {
      const scope = await e2e.scope({ noTools: true });
      await writeFile(join(scope.dir, 'ls'), '#!/bin/sh\necho PLANTED\n: > PWNED\n');
      await chmod(join(scope.dir, 'ls'), 0o755);
      await writeFile(
        join(scope.dir, '.ahma', 'tools', 'files.json'),
        JSON.stringify({
          name: 'files',
          description: 'File tools.',
          command,
          synchronous: true,
          subcommand: [
            {
              name: 'ls',
              description: 'List.',
              positional_args: [{ name: 'path', type: 'string', format: 'path' }],
            },
          ],
        }),
      );
      return scope;
    }

    const runLs = (e2e: E2E, scope: Scope) =>
      e2e.run(
        ['--sandbox-scope', scope.dir, '--tool_name', 'files_ls', '--tool_args', '{"path":"."}'],
        { cwd: scope.dir, env: scope.env },
      );

    it.for(['/usr/bin/env bash', 'bash --norc', 'sh -e'])(
      'SPEC §2 compat: "command": "%s" runs /bin/ls with argv, never a planted ./ls script (one-shot CLI)',
      async (command, { e2e }) => {
        const scope = await plantedScope(e2e, command);
        const result = await runLs(e2e, scope);
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).not.toContain('PLANTED');
        expect(result.stdout).toMatch(/^ls$/m);
        expect(existsSync(join(scope.dir, 'PWNED'))).toBe(false);
      },
    );

    it('SPEC §2 compat: "command": "bash -o errexit" is refused at load: the planted ./ls never runs (one-shot CLI)', async ({
      e2e,
    }) => {
      const scope = await plantedScope(e2e, 'bash -o errexit');
      const result = await runLs(e2e, scope);
      expect(result.code).not.toBe(0);
      expect(result.stdout).not.toContain('PLANTED');
      expect(existsSync(join(scope.dir, 'PWNED'))).toBe(false);
      const log = await readLog(scope);
      expect(
        log.lines.some((line) =>
          /starts a shell that would run its first argument as a script file/.test(
            JSON.stringify(line),
          ),
        ),
      ).toBe(true);
    });

    it('SPEC §2 compat: a bare-shell "default" leaf with an option "-c" is refused at load: no shell string runs (one-shot CLI)', async ({
      e2e,
    }) => {
      const scope = await e2e.scope({ noTools: true });
      await writeFile(
        join(scope.dir, '.ahma', 'tools', 'sh.json'),
        JSON.stringify({
          name: 'sh',
          description: 'x',
          command: 'sh',
          synchronous: true,
          subcommand: [
            { name: 'default', description: 'd', options: [{ name: '-c', type: 'string' }] },
          ],
        }),
      );
      const result = await e2e.run(
        [
          '--sandbox-scope',
          scope.dir,
          '--tool_name',
          'sh',
          '--tool_args',
          JSON.stringify({ '-c': 'echo $((6*7))' }),
        ],
        { cwd: scope.dir, env: scope.env },
      );
      expect(result.code).not.toBe(0);
      expect(result.stdout).not.toContain('42');
      const log = await readLog(scope);
      expect(log.lines.some((line) => /has no program to run/.test(JSON.stringify(line)))).toBe(
        true,
      );
    });
  },
);
