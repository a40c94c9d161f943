// The git catalog run for real in the Landlock sandbox: a repository in a fresh scope, driven only
// through the catalog's tools (R1.1), with the commit message passed through a temporary file.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareInvocation } from '../../src/index.js';
import {
  catalog,
  catalogRunner,
  expectSuccess,
  installed,
  type Catalog,
  type CatalogRunner,
} from './helpers.js';

/** A message a shell would mangle: quotes, $(…), backticks, ;, a # line, a trailing blank. */
const MESSAGE = [
  `Fix "quoted" and 'single' handling; rm -rf ~`,
  '',
  'Body with $(touch pwned) and `touch pwned2` and $HOME,',
  '# a line starting with a hash, kept as is',
  '\ttabbed * glob ? [chars] \\ backslash',
].join('\n');

let loaded: Catalog;
let runner: CatalogRunner;
let repoCount = 0;

/** Git's own view of a repository, read outside the sandbox, to check what the tools did. */
function git(repo: string, ...args: string[]): string {
  return execFileSync('git', ['-C', repo, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
}

/** A fresh repository in the scope, with an identity set through git_config; returns its dir. */
async function newRepo(): Promise<{ dir: string; at: { working_directory: string } }> {
  const name = `repo-${String(++repoCount)}`;
  await mkdir(join(runner.scope, name));
  const at = { working_directory: name };
  expectSuccess(await runner.call('git_init', { 'initial-branch': 'main', ...at }));
  expectSuccess(await runner.call('git_config', { name: 'user.name', value: 'Ahma Test', ...at }));
  expectSuccess(
    await runner.call('git_config', { name: 'user.email', value: 'ahma@example.test', ...at }),
  );
  return { dir: join(runner.scope, name), at };
}

async function commitFile(
  at: { working_directory: string },
  dir: string,
  file: string,
  content: string,
  message: string,
): Promise<void> {
  await writeFile(join(dir, file), content);
  expectSuccess(await runner.call('git_add', { paths: [file], ...at }));
  expectSuccess(await runner.call('git_commit', { message, ...at }));
}

describe.skipIf(!installed('git'))('git, run for real in the sandbox', () => {
  beforeAll(async () => {
    loaded = await catalog(['git']);
    // The user's global and system config (signing, hooks, templates) must not change the outcome.
    runner = await catalogRunner(loaded, {
      ...process.env,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      // A typical developer machine: git would start vi, which waits for a terminal that never
      // comes. The definition's core.editor=true must win over it (GIT_EDITOR would beat both).
      EDITOR: 'vi',
      VISUAL: undefined,
      GIT_EDITOR: undefined,
    });
  });
  afterAll(async () => {
    await runner.dispose();
  });

  it('R1.1: init, config, status, add, commit and log work on a fresh repository', async () => {
    const { dir, at } = await newRepo();
    expect(existsSync(join(dir, '.git'))).toBe(true);
    expect(git(dir, 'config', 'user.name').trim()).toBe('Ahma Test');

    await writeFile(join(dir, 'a.txt'), 'one\n');
    expect(expectSuccess(await runner.call('git_status', { short: true, ...at }))).toContain(
      '?? a.txt',
    );
    expectSuccess(await runner.call('git_add', { paths: ['a.txt'], ...at }));
    expect(expectSuccess(await runner.call('git_status', { short: true, ...at }))).toContain(
      'A  a.txt',
    );
    expectSuccess(await runner.call('git_commit', { message: 'Add a.txt', ...at }));
    expect(expectSuccess(await runner.call('git_log', { oneline: true, ...at }))).toMatch(
      /^[0-9a-f]{7,} Add a\.txt$/m,
    );
    expect(
      expectSuccess(
        await runner.call('git_rev-parse', { 'abbrev-ref': true, args: ['HEAD'], ...at }),
      ),
    ).toBe('main\n');
  });

  it('SPEC §2: git commit: a message with quotes, newlines, $(…) and # arrives intact through a temp file, which is removed', async () => {
    const { dir, at } = await newRepo();
    await writeFile(join(dir, 'b.txt'), 'b\n');
    expectSuccess(await runner.call('git_add', { paths: ['b.txt'], ...at }));

    const result = await runner.call('git_commit', { message: MESSAGE, ...at });
    expectSuccess(result);
    expect(git(dir, 'log', '-1', '--format=%B')).toBe(`${MESSAGE}\n\n`);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(existsSync(join(dir, 'pwned2'))).toBe(false);

    // The message was never on the command line: -F names a private file, gone after the call.
    const flag = result.argv.indexOf('-F');
    const file = result.argv[flag + 1] ?? '';
    expect(flag).toBeGreaterThan(0);
    expect(result.argv.join('\n')).not.toContain('quoted');
    expect(file).toMatch(/ahma-args-/);
    expect(existsSync(file)).toBe(false);
  });

  it('SPEC §2: the temp file holds exactly the message and is private (mode 0600) while the call runs', async () => {
    const prepared = await prepareInvocation(
      loaded.tool('git_commit').leaf,
      { message: MESSAGE },
      { scope: runner.scope },
    );
    try {
      const file = prepared.argv[prepared.argv.indexOf('-F') + 1] ?? '';
      expect(await readFile(file, 'utf8')).toBe(MESSAGE);
      const mode = execFileSync('stat', ['-c', '%a', file], { encoding: 'utf8' }).trim();
      expect(mode).toBe('600');
    } finally {
      await prepared.cleanup();
    }
  });

  it('R1.1: diff shows unstaged changes, staged ones with staged, and a summary with stat/name-only', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'c.txt', 'one\n', 'Add c');
    await writeFile(join(dir, 'c.txt'), 'one\ntwo\n');
    expect(expectSuccess(await runner.call('git_diff', at))).toContain('\n+two\n');
    expect(expectSuccess(await runner.call('git_diff', { staged: true, ...at }))).toBe('');
    expectSuccess(await runner.call('git_add', { paths: ['c.txt'], ...at }));
    expect(expectSuccess(await runner.call('git_diff', { staged: true, ...at }))).toContain(
      '\n+two\n',
    );
    expect(
      expectSuccess(await runner.call('git_diff', { staged: true, 'name-only': true, ...at })),
    ).toBe('c.txt\n');
    expect(
      expectSuccess(await runner.call('git_diff', { staged: true, stat: true, ...at })),
    ).toMatch(/c\.txt \| 1 \+/);
  });

  it('SPEC §2: joined flags git takes only as --name=value: log/show --format, diff --unified, status --untracked-files', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'f.txt', 'a\nb\nc\nd\ne\n', 'Add f');
    const log = await runner.call('git_log', { format: '%an|%s', 'max-count': 1, ...at });
    expect(log.argv).toContain('--format=%an|%s');
    expect(expectSuccess(log)).toBe('Ahma Test|Add f\n');
    expect(
      expectSuccess(await runner.call('git_show', { format: '%s', 'no-patch': true, ...at })),
    ).toBe('Add f\n');
    await writeFile(join(dir, 'f.txt'), 'a\nb\nC\nd\ne\n');
    const tight = expectSuccess(await runner.call('git_diff', { unified: 0, ...at }));
    expect(tight).toContain('\n-c\n+C\n');
    expect(tight).not.toContain('\n b\n'); // no context lines
    await writeFile(join(dir, 'new.txt'), 'x');
    const all = expectSuccess(await runner.call('git_status', { short: true, ...at }));
    expect(all).toContain('?? new.txt');
    const none = expectSuccess(
      await runner.call('git_status', { short: true, 'untracked-files': 'no', ...at }),
    );
    expect(none).not.toContain('new.txt');
  });

  it("R1.1: branch, switch and a --no-ff merge with git's default message", async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'base.txt', 'base\n', 'Base');
    expectSuccess(await runner.call('git_branch', { name: 'feature', ...at }));
    expect(expectSuccess(await runner.call('git_branch', at))).toMatch(/^ {2}feature$/m);
    expectSuccess(await runner.call('git_switch', { branch: 'feature', ...at }));
    expect(expectSuccess(await runner.call('git_branch', { 'show-current': true, ...at }))).toBe(
      'feature\n',
    );
    await commitFile(at, dir, 'feature.txt', 'f\n', 'Feature work');
    expectSuccess(await runner.call('git_switch', { branch: 'main', ...at }));

    const merge = await runner.call('git_merge', { commits: ['feature'], 'no-ff': true, ...at });
    expectSuccess(merge);
    expect(git(dir, 'log', '-1', '--format=%s')).toBe("Merge branch 'feature'\n");
    expect(git(dir, 'rev-list', '--parents', '-n', '1', 'HEAD').trim().split(' ')).toHaveLength(3);

    expectSuccess(await runner.call('git_switch', { create: 'topic', branch: 'main', ...at }));
    expect(git(dir, 'branch', '--show-current')).toBe('topic\n');
  });

  it('SPEC §3: rebase --continue after a resolved conflict keeps the message without an editor (core.editor=true)', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'f.txt', 'base\n', 'Base');
    expectSuccess(await runner.call('git_switch', { create: 'topic', ...at }));
    await commitFile(at, dir, 'f.txt', 'topic\n', 'Topic change');
    expectSuccess(await runner.call('git_switch', { branch: 'main', ...at }));
    await commitFile(at, dir, 'f.txt', 'main\n', 'Main change');
    expectSuccess(await runner.call('git_switch', { branch: 'topic', ...at }));

    const conflict = await runner.call('git_rebase', { upstream: 'main', ...at });
    expect(conflict.exitCode).not.toBe(0);
    expect(conflict.output).toContain('CONFLICT');
    await writeFile(join(dir, 'f.txt'), 'resolved\n');
    expectSuccess(await runner.call('git_add', { paths: ['f.txt'], ...at }));
    // Without core.editor=true git would start $EDITOR here and hang (or, without one, refuse).
    expectSuccess(await runner.call('git_rebase', { continue: true, timeout_seconds: 10, ...at }));
    expect(git(dir, 'log', '--format=%s', '-3')).toBe('Topic change\nMain change\nBase\n');
    expect(git(dir, 'branch', '--show-current')).toBe('topic\n');
  });

  it('R1.1: show, blame, grep and log find what was committed', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'src.txt', 'alpha\nneedle here\n', 'Add src');
    expect(expectSuccess(await runner.call('git_show', { stat: true, ...at }))).toContain(
      'Add src',
    );
    expect(expectSuccess(await runner.call('git_show', { object: 'HEAD:src.txt', ...at }))).toBe(
      'alpha\nneedle here\n',
    );
    expect(
      expectSuccess(await runner.call('git_blame', { file: 'src.txt', lines: '2,2', ...at })),
    ).toMatch(/\(Ahma Test .*\) needle here$/m);
    expect(expectSuccess(await runner.call('git_grep', { pattern: 'needle', ...at }))).toBe(
      'src.txt:2:needle here\n',
    );
    const log = await runner.call('git_log', {
      grep: 'Add',
      'max-count': 1,
      paths: ['src.txt'],
      ...at,
    });
    expect(expectSuccess(log)).toContain('Add src');
  });

  it('R1.1: tag, stash, restore, mv, rm and reset change the repository as git would', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'f.txt', 'v1\n', 'First');

    expectSuccess(
      await runner.call('git_tag', { tagname: 'v1.0', message: 'Release 1.0\n\nNotes', ...at }),
    );
    expect(git(dir, 'cat-file', '-t', 'v1.0')).toBe('tag\n');
    expect(git(dir, 'tag', '-l', '--format=%(contents)', 'v1.0')).toBe('Release 1.0\n\nNotes\n\n');

    await writeFile(join(dir, 'f.txt'), 'v2\n');
    expectSuccess(await runner.call('git_stash_push', { message: 'wip', ...at }));
    expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe('v1\n');
    expect(expectSuccess(await runner.call('git_stash_list', at))).toMatch(
      /^stash@\{0\}: On main: wip$/m,
    );
    expectSuccess(await runner.call('git_stash_pop', at));
    expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe('v2\n');

    expectSuccess(await runner.call('git_restore', { paths: ['f.txt'], ...at }));
    expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe('v1\n');

    expectSuccess(await runner.call('git_mv', { source: 'f.txt', destination: 'g.txt', ...at }));
    expect(git(dir, 'status', '--short')).toBe('R  f.txt -> g.txt\n');
    expectSuccess(await runner.call('git_commit', { message: 'Rename', ...at }));
    expectSuccess(await runner.call('git_rm', { paths: ['g.txt'], ...at }));
    expect(existsSync(join(dir, 'g.txt'))).toBe(false);

    expectSuccess(await runner.call('git_reset', { hard: true, commit: 'HEAD~1', ...at }));
    expect(git(dir, 'log', '-1', '--format=%s')).toBe('First\n');
    expect(await readFile(join(dir, 'f.txt'), 'utf8')).toBe('v1\n');
  });

  it("SPEC §3: a failing git command is a failed result with git's message, not an exception", async () => {
    const { at } = await newRepo();
    const result = await runner.call('git_switch', { branch: 'no-such-branch', ...at });
    expect(result.status).toBe('failed');
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toContain('no-such-branch');
  });

  it('R7.1: a path argument outside the scope is refused before git runs', async () => {
    const { at } = await newRepo();
    await expect(
      runner.call('git_add', { paths: ['../../etc/passwd'], ...at }),
    ).rejects.toMatchObject({
      code: 'PATH_OUTSIDE_SCOPE',
    });
  });

  it('SPEC §2 argv: git_log {"revision": "--output=FILE"} is refused before git runs, and FILE is not written', async () => {
    const { dir, at } = await newRepo();
    await commitFile(at, dir, 'a.txt', 'a\n', 'first');
    const pwned = join(dir, 'pwned');
    await expect(
      runner.call('git_log', { revision: `--output=${pwned}`, ...at }),
    ).rejects.toMatchObject({
      code: 'ARGV_INVALID',
      message: expect.stringContaining('argument "revision"') as unknown,
    });
    expect(existsSync(pwned)).toBe(false);
    // What the refusal prevents: the same word in git's argv makes git write the file.
    git(dir, 'log', `--output=${join(dir, 'control')}`);
    expect(existsSync(join(dir, 'control'))).toBe(true);
    // Revisions that merely contain "-" still work.
    expectSuccess(await runner.call('git_switch', { create: 'feature-x', ...at }));
    expect(expectSuccess(await runner.call('git_log', { revision: 'feature-x', ...at }))).toContain(
      'first',
    );
  });

  it('SPEC §2 argv: git_config puts "--" before name, so a value such as -1 is set as data', async () => {
    const { dir, at } = await newRepo();
    const set = await runner.call('git_config', { name: 'core.compression', value: '-1', ...at });
    expectSuccess(set);
    expect(set.argv.slice(-3)).toEqual(['--', 'core.compression', '-1']);
    expect(git(dir, 'config', 'core.compression').trim()).toBe('-1');
    const get = await runner.call('git_config', { get: true, name: 'core.compression', ...at });
    expect(expectSuccess(get).trim()).toBe('-1');
    // Without a name no "--" is passed, so a lone value starting with "-" is refused.
    await expect(runner.call('git_config', { value: '--list', ...at })).rejects.toMatchObject({
      code: 'ARGV_INVALID',
    });
  });
});
