// SPEC §2 argv rules applied to the catalog: the exact command line common calls produce, for the
// programs that are not run for real here (gh, cargo, pnpm) and for the shapes that matter in the
// others (python's -m/-c, npm's "--", find's paths first, grep's -e, git's message file).
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argvOf, callErrors, catalog, type Catalog } from './helpers.js';

let loaded: Catalog;
let scope = '';

beforeAll(async () => {
  loaded = await catalog();
  scope = await realpath(await mkdtemp(join(tmpdir(), 'ahma-catalog-argv-')));
});
afterAll(async () => {
  await rm(scope, { recursive: true, force: true });
});

type Case = readonly [
  tool: string,
  args: Record<string, unknown>,
  argv: (scope: string) => string[],
];

function cases(list: readonly Case[]) {
  it.each(list.map(([tool, args, argv]) => ({ tool, args, argv })))(
    'SPEC §2: $tool $args',
    async ({ tool, args, argv }) => {
      expect(await argvOf(loaded.tool(tool), args, scope)).toEqual(argv(scope));
    },
  );
}

describe('gh', () => {
  cases([
    ['gh_auth_status', {}, () => ['gh', 'auth', 'status']],
    [
      'gh_pr_list',
      { state: 'all', limit: 5, label: ['bug', 'ui'], json: 'number,title', repo: 'cli/cli' },
      () => [
        'gh',
        'pr',
        'list',
        '-s',
        'all',
        '-L',
        '5',
        '-l',
        'bug',
        '-l',
        'ui',
        '--json',
        'number,title',
        '-R',
        'cli/cli',
      ],
    ],
    ['gh_pr_view', { pr: '42', comments: true }, () => ['gh', 'pr', 'view', '-c', '42']],
    ['gh_pr_diff', { 'name-only': true }, () => ['gh', 'pr', 'diff', '--name-only']],
    [
      'gh_pr_checks',
      { watch: true, 'fail-fast': true, interval: 30 },
      () => ['gh', 'pr', 'checks', '--watch', '--fail-fast', '-i', '30'],
    ],
    [
      'gh_pr_create',
      {
        title: 'Add "x"',
        body: 'Fixes #1\n\n$(id) `uname`',
        base: 'main',
        draft: true,
        reviewer: ['alice', 'org/team'],
      },
      () => [
        'gh',
        'pr',
        'create',
        '-t',
        'Add "x"',
        '--body-file',
        '@file:Fixes #1\n\n$(id) `uname`',
        '-B',
        'main',
        '-d',
        '-r',
        'alice',
        '-r',
        'org/team',
      ],
    ],
    [
      'gh_pr_checkout',
      { pr: '42', branch: 'review-42' },
      () => ['gh', 'pr', 'checkout', '-b', 'review-42', '42'],
    ],
    ['gh_pr_comment', { body: 'LGTM' }, () => ['gh', 'pr', 'comment', '--body-file', '@file:LGTM']],
    [
      'gh_pr_review',
      { pr: '7', 'request-changes': true, body: 'Please add a test.' },
      () => ['gh', 'pr', 'review', '-r', '--body-file', '@file:Please add a test.', '7'],
    ],
    [
      'gh_pr_merge',
      { pr: '42', squash: true, 'delete-branch': true, subject: 'feat: x (#42)' },
      () => ['gh', 'pr', 'merge', '-s', '-d', '-t', 'feat: x (#42)', '42'],
    ],
    [
      'gh_pr_close',
      { pr: '9', comment: 'Superseded' },
      () => ['gh', 'pr', 'close', '-c', 'Superseded', '9'],
    ],
    [
      'gh_issue_list',
      { assignee: '@me', limit: 10 },
      () => ['gh', 'issue', 'list', '-L', '10', '-a', '@me'],
    ],
    ['gh_issue_view', { issue: '12', comments: true }, () => ['gh', 'issue', 'view', '-c', '12']],
    [
      'gh_issue_create',
      { title: 'Crash', body: 'Steps:\n1. run', label: ['bug'] },
      () => [
        'gh',
        'issue',
        'create',
        '-t',
        'Crash',
        '--body-file',
        '@file:Steps:\n1. run',
        '-l',
        'bug',
      ],
    ],
    [
      'gh_issue_comment',
      { issue: '12', body: 'Fixed in #13' },
      () => ['gh', 'issue', 'comment', '--body-file', '@file:Fixed in #13', '12'],
    ],
    [
      'gh_issue_close',
      { issue: '12', reason: 'not planned' },
      () => ['gh', 'issue', 'close', '-r', 'not planned', '12'],
    ],
    [
      'gh_repo_view',
      { repository: 'cli/cli', json: 'name,url' },
      () => ['gh', 'repo', 'view', '--json', 'name,url', 'cli/cli'],
    ],
    [
      'gh_repo_clone',
      { repository: 'cli/cli', directory: 'vendor/cli' },
      (s) => ['gh', 'repo', 'clone', 'cli/cli', `${s}/vendor/cli`],
    ],
    [
      'gh_run_list',
      { branch: 'main', status: 'failure' },
      () => ['gh', 'run', 'list', '-b', 'main', '-s', 'failure'],
    ],
    [
      'gh_run_view',
      { 'run-id': '123', 'log-failed': true },
      () => ['gh', 'run', 'view', '--log-failed', '123'],
    ],
    [
      'gh_run_watch',
      { 'run-id': '123', 'exit-status': true },
      () => ['gh', 'run', 'watch', '--exit-status', '123'],
    ],
    [
      'gh_run_rerun',
      { 'run-id': '123', failed: true },
      () => ['gh', 'run', 'rerun', '--failed', '123'],
    ],
    ['gh_release_list', { limit: 3 }, () => ['gh', 'release', 'list', '-L', '3']],
    ['gh_release_view', { tag: 'v1.0.0' }, () => ['gh', 'release', 'view', 'v1.0.0']],
    [
      'gh_api',
      {
        endpoint: 'repos/{owner}/{repo}/pulls',
        'raw-field': ['state=open'],
        jq: '.[].number',
        paginate: true,
      },
      () => [
        'gh',
        'api',
        '-f',
        'state=open',
        '-q',
        '.[].number',
        '--paginate',
        'repos/{owner}/{repo}/pulls',
      ],
    ],
    [
      'gh_api',
      {
        endpoint: 'repos/{owner}/{repo}/issues',
        method: 'POST',
        field: ['title=Bug', 'draft=false'],
      },
      () => [
        'gh',
        'api',
        '-X',
        'POST',
        '-F',
        'title=Bug',
        '-F',
        'draft=false',
        'repos/{owner}/{repo}/issues',
      ],
    ],
  ]);

  it('SPEC §2: calls outside the schema are refused before gh runs', () => {
    expect(callErrors(loaded.tool('gh_issue_close'), { issue: '1', reason: 'wontfix' })).toEqual([
      'argument "reason" must be one of "completed", "not planned"',
    ]);
    expect(callErrors(loaded.tool('gh_pr_comment'), {})).toHaveLength(1);
    expect(callErrors(loaded.tool('gh_pr_list'), { limit: 'ten' })).toHaveLength(1);
  });
});

describe('cargo', () => {
  cases([
    ['cargo_build', {}, () => ['cargo', 'build']],
    [
      'cargo_build',
      {
        release: true,
        features: ['serde', 'cli'],
        package: ['core'],
        'message-format': 'short',
        'manifest-path': 'crates/core/Cargo.toml',
      },
      (s) => [
        'cargo',
        'build',
        '-p',
        'core',
        '-F',
        'serde',
        '-F',
        'cli',
        '-r',
        '--message-format',
        'short',
        '--manifest-path',
        `${s}/crates/core/Cargo.toml`,
      ],
    ],
    [
      'cargo_check',
      { workspace: true, 'all-targets': true },
      () => ['cargo', 'check', '--workspace', '--all-targets'],
    ],
    ['cargo_test', {}, () => ['cargo', 'test']],
    [
      'cargo_test',
      {
        workspace: true,
        testname: 'parser::',
        'test-args': ['--nocapture', '--test-threads', '1'],
      },
      () => [
        'cargo',
        'test',
        '--workspace',
        'parser::',
        '--',
        '--nocapture',
        '--test-threads',
        '1',
      ],
    ],
    [
      'cargo_test',
      { doc: true, 'no-fail-fast': true },
      () => ['cargo', 'test', '--doc', '--no-fail-fast'],
    ],
    [
      'cargo_clippy',
      { 'all-targets': true, 'lint-args': ['-D', 'warnings'] },
      () => ['cargo', 'clippy', '--all-targets', '--', '-D', 'warnings'],
    ],
    [
      'cargo_clippy',
      { fix: true, 'allow-dirty': true },
      () => ['cargo', 'clippy', '--fix', '--allow-dirty'],
    ],
    ['cargo_fmt', {}, () => ['cargo', 'fmt']],
    ['cargo_fmt', { all: true, check: true }, () => ['cargo', 'fmt', '--all', '--check']],
    [
      'cargo_run',
      { bin: 'cli', args: ['--help', 'a b'] },
      () => ['cargo', 'run', '--bin', 'cli', '--', '--help', 'a b'],
    ],
    ['cargo_doc', { 'no-deps': true }, () => ['cargo', 'doc', '--no-deps']],
    ['cargo_clean', { release: true }, () => ['cargo', 'clean', '-r']],
    [
      'cargo_new',
      { path: 'hello', lib: true, vcs: 'none', edition: '2021' },
      (s) => ['cargo', 'new', '--lib', '--vcs', 'none', '--edition', '2021', `${s}/hello`],
    ],
    ['cargo_init', {}, () => ['cargo', 'init']],
    [
      'cargo_add',
      { crates: ['serde@1'], features: ['derive'] },
      () => ['cargo', 'add', '-F', 'derive', 'serde@1'],
    ],
    ['cargo_add', { crates: ['proptest'], dev: true }, () => ['cargo', 'add', '--dev', 'proptest']],
    [
      'cargo_add',
      { path: 'crates/shared' },
      (s) => ['cargo', 'add', '--path', `${s}/crates/shared`],
    ],
    ['cargo_remove', { crates: ['rand', 'log'] }, () => ['cargo', 'remove', 'rand', 'log']],
    ['cargo_update', {}, () => ['cargo', 'update']],
    [
      'cargo_update',
      { crates: ['serde'], precise: '1.0.200' },
      () => ['cargo', 'update', '--precise', '1.0.200', 'serde'],
    ],
    ['cargo_tree', { depth: 1, duplicates: true }, () => ['cargo', 'tree', '--depth', '1', '-d']],
    [
      'cargo_metadata',
      { 'no-deps': true },
      () => ['cargo', 'metadata', '--format-version', '1', '--no-deps'],
    ],
  ]);

  it('SPEC §2: pass-through arguments follow "--" (after_double_dash), and paths outside the scope are refused', async () => {
    expect(
      await argvOf(
        loaded.tool('cargo_test'),
        { testname: 'parse', 'test-args': ['--exact'] },
        scope,
      ),
    ).toEqual(['cargo', 'test', 'parse', '--', '--exact']);
    expect(callErrors(loaded.tool('cargo_test'), { separator: '--' })).toEqual([
      expect.stringContaining('unknown argument "separator"'),
    ]);
    await expect(
      argvOf(loaded.tool('cargo_build'), { 'manifest-path': '/etc/Cargo.toml' }, scope),
    ).rejects.toMatchObject({ code: 'PATH_OUTSIDE_SCOPE' });
  });
});

describe('pnpm', () => {
  cases([
    ['pnpm_install', {}, () => ['pnpm', 'install']],
    [
      'pnpm_install',
      { 'frozen-lockfile': true, filter: ['web'] },
      () => ['pnpm', 'install', '--frozen-lockfile', '-F', 'web'],
    ],
    [
      'pnpm_add',
      { packages: ['zod@4'], 'save-dev': true, filter: ['@ahma/core'] },
      () => ['pnpm', 'add', '-D', '-F', '@ahma/core', 'zod@4'],
    ],
    [
      'pnpm_add',
      { packages: ['typescript'], 'save-exact': true, 'workspace-root': true },
      () => ['pnpm', 'add', '-E', '-w', 'typescript'],
    ],
    ['pnpm_remove', { packages: ['lodash'] }, () => ['pnpm', 'remove', 'lodash']],
    [
      'pnpm_update',
      { latest: true, packages: ['vitest'] },
      () => ['pnpm', 'update', '-L', 'vitest'],
    ],
    [
      'pnpm_run',
      { script: 'test', args: ['--watch=false', 'a b'], filter: ['web'], recursive: true },
      () => ['pnpm', 'run', '-F', 'web', '-r', 'test', '--watch=false', 'a b'],
    ],
    [
      'pnpm_run',
      { script: 'build', 'if-present': true },
      () => ['pnpm', 'run', '--if-present', 'build'],
    ],
    ['pnpm_test', { args: ['--coverage'] }, () => ['pnpm', 'test', '--coverage']],
    ['pnpm_exec', { command: ['tsc', '--noEmit'] }, () => ['pnpm', 'exec', 'tsc', '--noEmit']],
    [
      'pnpm_dlx',
      { command: ['create-vite', 'my-app'] },
      () => ['pnpm', 'dlx', 'create-vite', 'my-app'],
    ],
    ['pnpm_list', { depth: 0, json: true }, () => ['pnpm', 'list', '--depth', '0', '--json']],
    ['pnpm_outdated', { format: 'json' }, () => ['pnpm', 'outdated', '--format', 'json']],
    ['pnpm_why', { packages: ['react'] }, () => ['pnpm', 'why', 'react']],
    [
      'pnpm_audit',
      { 'audit-level': 'high', prod: true },
      () => ['pnpm', 'audit', '--audit-level', 'high', '-P'],
    ],
    ['pnpm_init', {}, () => ['pnpm', 'init']],
  ]);
});

describe('git, npm, python and the file tools', () => {
  cases([
    ['git_status', { short: true }, () => ['git', '-c', 'core.editor=true', 'status', '-s']],
    ['git_log', {}, () => ['git', '-c', 'core.editor=true', 'log', '-n', '20']],
    [
      'git_log',
      { 'max-count': 5, oneline: true, author: 'Ada', revision: 'main..HEAD', paths: ['src'] },
      (s) => [
        'git',
        '-c',
        'core.editor=true',
        'log',
        '-n',
        '5',
        '--oneline',
        '--author',
        'Ada',
        'main..HEAD',
        `${s}/src`,
      ],
    ],
    [
      'git_commit',
      { message: 'Subject\n\nBody "quoted" $(id)', all: true },
      () => [
        'git',
        '-c',
        'core.editor=true',
        'commit',
        '-a',
        '-F',
        '@file:Subject\n\nBody "quoted" $(id)',
      ],
    ],
    [
      'git_commit',
      { amend: true, 'no-edit': true },
      () => ['git', '-c', 'core.editor=true', 'commit', '--amend', '--no-edit'],
    ],
    [
      'git_switch',
      { create: 'feature', branch: 'main' },
      () => ['git', '-c', 'core.editor=true', 'switch', '-c', 'feature', 'main'],
    ],
    [
      'git_push',
      { 'set-upstream': true, remote: 'origin', refspecs: ['feature'] },
      () => ['git', '-c', 'core.editor=true', 'push', '-u', 'origin', 'feature'],
    ],
    ['git_remote', { verbose: true }, () => ['git', '-c', 'core.editor=true', 'remote', '-v']],
    ['git_stash_pop', {}, () => ['git', '-c', 'core.editor=true', 'stash', 'pop']],
    [
      'python',
      { module: 'pytest', args: ['-q', 'tests'] },
      () => ['python3', '-u', '-m', 'pytest', '-q', 'tests'],
    ],
    [
      'python',
      { code: 'import sys; print(sys.argv)', args: ['-x'] },
      () => ['python3', '-u', '-c', 'import sys; print(sys.argv)', '-x'],
    ],
    [
      'python',
      { script: 'main.py', args: ['--flag'], unbuffered: false },
      (s) => ['python3', `${s}/main.py`, '--flag'],
    ],
    [
      'python',
      { 'warning-control': ['error'], isolated: true, script: 'main.py' },
      (s) => ['python3', '-u', '-I', '-W', 'error', `${s}/main.py`],
    ],
    [
      'npm_run',
      { script: 'build', args: ['--watch'] },
      () => ['npm', 'run', 'build', '--', '--watch'],
    ],
    ['npm_run', { script: 'lint' }, () => ['npm', 'run', 'lint']],
    ['npm_test', {}, () => ['npm', 'test']],
    ['npm_install', { packages: ['zod'], 'save-dev': true }, () => ['npm', 'install', '-D', 'zod']],
    [
      'npm_install',
      { omit: ['dev', 'optional'] },
      () => ['npm', 'install', '--omit', 'dev', '--omit', 'optional'],
    ],
    [
      'npm_exec',
      { package: ['cowsay'], command: ['cowsay', 'hi'] },
      () => ['npm', 'exec', '--package', 'cowsay', '--', 'cowsay', 'hi'],
    ],
    ['npm_init', {}, () => ['npm', 'init', '-y']],
    ['npm_audit', { 'audit-level': 'high' }, () => ['npm', 'audit', '--audit-level', 'high']],
    ['npm_audit_fix', { 'dry-run': true }, () => ['npm', 'audit', 'fix', '--dry-run']],
    [
      'npm_pkg_get',
      { keys: ['name', 'scripts.build'] },
      () => ['npm', 'pkg', 'get', 'name', 'scripts.build'],
    ],
    [
      'npm_version',
      { newversion: 'patch', 'no-git-tag-version': true },
      () => ['npm', 'version', '--no-git-tag-version', 'patch'],
    ],
    ['file-tools_ls', { long: true, all: true }, () => ['env', 'ls', '-l', '-a']],
    [
      'file-tools_find',
      { '-maxdepth': 2, '-type': 'f', '-name': '*.ts' },
      (s) => ['env', 'find', s, '-maxdepth', '2', '-type', 'f', '-name', '*.ts'],
    ],
    [
      'file-tools_grep',
      { pattern: '-x $(id)', recursive: true, include: ['*.ts'], paths: ['src'] },
      (s) => ['env', 'grep', '-r', '-n', '--include', '*.ts', '-e', '-x $(id)', `${s}/src`],
    ],
    [
      'file-tools_tail',
      { lines: '+2', paths: ['a.txt'] },
      (s) => ['env', 'tail', '-n', '+2', `${s}/a.txt`],
    ],
    ['file-tools_diff', { from: 'a', to: 'b' }, (s) => ['env', 'diff', '-u', `${s}/a`, `${s}/b`]],
    [
      'file-tools_rm',
      { recursive: true, force: true, paths: ['build'] },
      (s) => ['env', 'rm', '-r', '-f', `${s}/build`],
    ],
  ]);
});
