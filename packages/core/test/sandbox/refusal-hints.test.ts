// R7.13: a refused read or write is explained in the tool result. The parser on each shape of
// refusal real tools print, the rules that explain (or do not explain) a path, and end to end
// through a real engine and kernel: a planted ~/.aws/credentials, a write outside the scope, a
// refusal by plain file modes, and words in the output of a command that succeeded.
//
// The scope and HOME are under /var/tmp: /tmp is writable by design.
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../../src/process/executor.js';
import {
  shippedDenies,
  PRIVATE_STATE_LIST,
  type ReadPolicy,
} from '../../src/sandbox/read-policy.js';
import {
  findRefusals,
  MAX_HINTS,
  refusalHints,
  type RefusalContext,
} from '../../src/sandbox/refusal-hints.js';
import {
  bash,
  engineFixture,
  removeAll,
  run,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';

const MARK = '[ahma sandbox]';

describe('R7.13: refusals found in the output', () => {
  const shapes: [string, string, string, string][] = [
    // [what, output line(s), the path found, the kind]
    ['cat', 'cat: /x/y: Permission denied', '/x/y', 'unknown'],
    ['bash', 'bash: line 1: /opt/y: Permission denied', '/opt/y', 'unknown'],
    ['bash with ~', 'bash: ~/z: Permission denied', '~/z', 'unknown'],
    [
      'Python',
      "Traceback (most recent call last):\nPermissionError: [Errno 13] Permission denied: '/opt/z'",
      '/opt/z',
      'unknown',
    ],
    [
      'Python script',
      "python3: can't open file '/root/x.py': [Errno 13] Permission denied",
      '/root/x.py',
      'unknown',
    ],
    ['Node', "Error: EACCES: permission denied, open '/etc/shadow'", '/etc/shadow', 'unknown'],
    ['Node mkdir', "Error: EACCES: permission denied, mkdir '/opt/npm'", '/opt/npm', 'write'],
    [
      'npm',
      "npm error code EACCES\nnpm error Error: EACCES: permission denied, mkdir '/opt/npm'",
      '/opt/npm',
      'write',
    ],
    [
      'git config',
      'error: could not lock config file .git/config: Permission denied',
      '.git/config',
      'write',
    ],
    [
      'git clone',
      "fatal: could not create work tree dir '/opt/clone': Permission denied",
      '/opt/clone',
      'write',
    ],
    ['git init', 'fatal: cannot mkdir /opt/g: Permission denied', '/opt/g', 'write'],
    ['mkdir', "mkdir: cannot create directory '/opt/d': Permission denied", '/opt/d', 'write'],
    [
      'mkdir (UTF-8 quotes)',
      'mkdir: cannot create directory ‘/opt/d’: Permission denied',
      '/opt/d',
      'write',
    ],
    ['touch', "touch: cannot touch '/opt/x': Permission denied", '/opt/x', 'write'],
    ['ln', "ln: failed to create symbolic link '/opt/l': Permission denied", '/opt/l', 'write'],
    ['rm', "rm: cannot remove '/etc/hostname': Permission denied", '/etc/hostname', 'write'],
    ['tee', 'tee: /opt/t: Permission denied', '/opt/t', 'unknown'],
    ['ls', "ls: cannot open directory '/home/other': Permission denied", '/home/other', 'read'],
    ['stat', "ls: cannot access '/root/x': Permission denied", '/root/x', 'stat'],
    [
      'ld',
      '/usr/bin/ld: cannot open output file /opt/a.out: Permission denied',
      '/opt/a.out',
      'write',
    ],
    [
      'rustc',
      'error: couldn\'t create a temp dir: Permission denied (os error 13) at path "/opt/rmetaX"',
      '/opt/rmetaX',
      'write',
    ],
    [
      'cargo',
      'error: failed to create package `cr` at `/opt/cr`\n\nCaused by:\n  failed to create directory `/opt/cr`\n\nCaused by:\n  Permission denied (os error 13)',
      '/opt/cr',
      'write',
    ],
    ['zsh', 'zsh: permission denied: /opt/y', '/opt/y', 'unknown'],
    ['Go', 'go: creating work dir: mkdir /opt/w: permission denied', '/opt/w', 'write'],
    [
      'EROFS',
      "OSError: [Errno 30] Read-only file system: '.git/hooks/pre-commit'",
      '.git/hooks/pre-commit',
      'write',
    ],
    ['EPERM', "touch: cannot touch '/opt/x': Operation not permitted", '/opt/x', 'write'],
    [
      'EBUSY (a rename onto a protected hand-off file: a mount point)',
      'error: could not write config file .git/config: Device or resource busy',
      '.git/config',
      'write',
    ],
  ];
  for (const [what, output, path, kind] of shapes) {
    it(`R7.13: ${what}`, () => {
      const found = findRefusals(output);
      expect(found.map((refusal) => refusal.path)).toContain(path);
      expect(found.find((refusal) => refusal.path === path)?.kind).toBe(kind);
    });
  }

  it('R7.13: a program named at the start of a line is not a refused path', () => {
    const found = findRefusals(
      '/usr/bin/ld: cannot open output file /opt/a.out: Permission denied',
    );
    expect(found.map((refusal) => refusal.path)).toEqual(['/opt/a.out']);
  });

  it('R7.13: both paths of mv; each path once; errno by the words', () => {
    const found = findRefusals(
      "mv: cannot move 'm.rs' to '/opt/m.rs': Permission denied\nmv: cannot move 'm.rs' to '/opt/m.rs': Permission denied\ncp: cannot create regular file '/x': Read-only file system",
    );
    expect(found.map((refusal) => [refusal.path, refusal.errno])).toEqual([
      ['m.rs', 'EACCES'],
      ['/opt/m.rs', 'EACCES'],
      ['/x', 'EROFS'],
    ]);
  });

  it('R7.13: output without a refusal, or a refusal naming no path, finds nothing', () => {
    expect(findRefusals('all good\n'.repeat(1000))).toEqual([]);
    expect(findRefusals('npm error code EACCES\nPermission denied\n')).toEqual([]);
    // The bare Rust error looks up only for a backquoted path.
    expect(findRefusals("copying '/opt/a'\nPermission denied (os error 13)")).toEqual([]);
  });

  it('R7.13: a large output is scanned fast', () => {
    const line = 'cat: /opt/some/long/path/name: Permission denied\n';
    const output = line.repeat(Math.ceil((48 * 1024) / line.length)) + 'x'.repeat(4096);
    const started = performance.now();
    expect(findRefusals(output)).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('R7.13: which rule refused a path', () => {
  let root: string;
  let home: string;
  let scope: string;
  let temp: string;
  let cache: string;
  let state: string;
  let context: RefusalContext;

  beforeAll(async () => {
    root = await varTmpDir('hints');
    home = join(root, 'home');
    scope = join(root, 'scope');
    temp = join(root, 'tmp');
    cache = join(temp, 'cache');
    state = join(root, 'state');
    for (const dir of [home, join(home, '.aws'), scope, cache, state]) {
      await mkdir(dir, { recursive: true });
    }
    await writeFile(join(home, '.aws', 'credentials'), 'secret');
    await writeFile(join(home, 'notes.txt'), 'notes');
    await writeFile(join(scope, 'existing.txt'), 'x');
    await writeFile(join(root, 'operator'), 'x');
    const writable = [scope, temp, cache];
    const policy: ReadPolicy = {
      grants: [
        { path: '/', access: 'list' },
        { path: '/usr', access: 'read' },
        { path: '/etc', access: 'read' },
        { path: '/opt', access: 'read' },
        { path: home, access: 'read' },
        ...writable.map((path) => ({ path, access: 'write' as const })),
      ],
      denies: [
        ...shippedDenies(home),
        {
          path: join(root, 'operator'),
          except: [],
          list: '--deny-read',
          why: 'denied by the operator',
        },
        { path: state, except: [], list: PRIVATE_STATE_LIST, why: 'logs' },
      ],
    };
    context = {
      cwd: scope,
      home,
      tempDir: temp,
      sandbox: { mechanism: 'landlock', policy, writable, scope, cacheRoot: cache },
    };
  });

  afterAll(() => removeAll([root]));

  it('R7.13: a credential names its deny list and --allow-read, shown under ~', () => {
    expect(refusalHints(`cat: ${home}/.aws/credentials: Permission denied`, context)).toEqual([
      '`~/.aws/credentials` is in the credentials deny list (AWS credentials): commands cannot read it. If this tool needs it, restart Ahma with --allow-read ~/.aws/credentials.',
    ]);
    // Spelled with ~/ in the output, too.
    expect(refusalHints('bash: ~/.aws/credentials: Permission denied', context)).toHaveLength(1);
  });

  it('R7.13: a system secret names the system secrets deny list', () => {
    const [hint] = refusalHints(
      "PermissionError: [Errno 13] Permission denied: '/etc/shadow'",
      context,
    );
    expect(hint).toContain('`/etc/shadow` is in the system secrets deny list (password hashes)');
    expect(hint).toContain('--allow-read /etc/shadow');
  });

  it("R7.13: Ahma's private state gets no advice to allow it", () => {
    const [hint] = refusalHints(`cat: ${state}/logs/x: Permission denied`, context);
    expect(hint).toBe(
      `\`${state}/logs/x\` is Ahma's private state: commands can never read or write it.`,
    );
  });

  it('R7.13: a --deny-read path says so', () => {
    const [hint] = refusalHints(`cat: ${root}/operator: Permission denied`, context);
    expect(hint).toContain('is denied by --deny-read');
  });

  it('R7.13: a write outside the writable paths names them and --allow-write', () => {
    const [hint] = refusalHints("touch: cannot touch '/opt/ahma-x': Permission denied", context);
    expect(hint).toBe(
      `\`/opt/ahma-x\` is outside the writable paths (the scope ${scope}, the temp directory ${temp}, Ahma's caches): commands can write only there; --allow-write PATH adds one.`,
    );
    // A refusal of unknown kind naming a path that does not exist was a creation.
    expect(
      refusalHints("PermissionError: [Errno 13] Permission denied: '/opt/ahma-y'", context)[0],
    ).toContain('outside the writable paths');
  });

  it('R7.13: a read outside every grant says what commands may read and --allow-read', () => {
    const [hint] = refusalHints(`ls: cannot open directory '${root}': Permission denied`, context);
    expect(hint).toBe(
      `\`${root}\` is outside what commands may read (the system, the scope, the temp directory, the caches and HOME): --allow-read ${root} adds it.`,
    );
  });

  it('R7.13: paths the policy allows get nothing (the file modes refused them)', () => {
    const output = [
      'cat: existing.txt: Permission denied',
      `cat: ${home}/notes.txt: Permission denied`,
      `touch: cannot touch '${scope}/new': Permission denied`,
      "rm: cannot remove '/etc/hostname': Permission denied", // existing, readable: ambiguous
      'bash: line 1: /etc/hostname: Permission denied',
      "ls: cannot access '/root/x': Permission denied", // stat: never Landlock
      'cat: /tmp/x: Operation not permitted', // EPERM: not Landlock's errno
      "cp: cannot create regular file '/opt/x': Read-only file system", // EROFS without a hand-off
    ].join('\n');
    // rm of an existing file outside the writable paths is a write the sandbox refused.
    expect(refusalHints(output, context)).toEqual([
      expect.stringContaining('`/etc/hostname` is outside the writable paths'),
    ]);
    expect(
      refusalHints(
        output
          .split('\n')
          .filter((line) => !line.startsWith('rm'))
          .join('\n'),
        context,
      ),
    ).toEqual([]);
  });

  it('R7.13: hand-off files are explained by the callback, first', () => {
    const seen: string[] = [];
    const hints = refusalHints(
      'error: could not lock config file .git/config: Read-only file system',
      {
        ...context,
        explainHandoff: (path) => {
          seen.push(path);
          return path.endsWith('/.git/config') ? `\`${path}\` is a hand-off file.` : undefined;
        },
      },
    );
    expect(seen).toEqual([join(scope, '.git/config')]);
    expect(hints).toEqual([`\`${join(scope, '.git/config')}\` is a hand-off file.`]);
  });

  it('R7.13: hints are deduplicated and capped', () => {
    const lines = Array.from(
      { length: 20 },
      (_, index) => `touch: cannot touch '/opt/ahma-${String(index)}': Permission denied`,
    );
    const hints = refusalHints([...lines, ...lines].join('\n'), context);
    expect(hints).toHaveLength(MAX_HINTS);
    expect(new Set(hints).size).toBe(MAX_HINTS);
  });

  it('R7.13: unconfined, nothing; Seatbelt explains writes refused with EPERM only', () => {
    const sandbox = context.sandbox;
    const output = "touch: cannot touch '/opt/ahma-x': Operation not permitted";
    expect(
      refusalHints(output, { ...context, sandbox: { ...sandbox, mechanism: 'none' } }),
    ).toEqual([]);
    const seatbelt = { ...context, sandbox: { ...sandbox, mechanism: 'seatbelt' as const } };
    expect(refusalHints(output, seatbelt)[0]).toContain('outside the writable paths');
    expect(refusalHints(`cat: ${home}/.aws/credentials: Permission denied`, seatbelt)).toEqual([]);
  });
});

describe('R7.13: refusals explained in real results', () => {
  let home: string;
  let fixture: EngineFixture;
  let pooled: EngineFixture;

  beforeAll(async () => {
    home = await varTmpDir('home');
    await mkdir(join(home, '.aws'));
    await writeFile(join(home, '.aws', 'credentials'), '[default]\naws_secret_access_key=x\n');
    const env = { ...process.env, HOME: home };
    fixture = await engineFixture({ env, maxOutputTokens: 512 });
    pooled = await engineFixture({ env, noShellPool: false });
  });

  afterAll(async () => {
    await fixture.dispose();
    await pooled.dispose();
    await removeAll([home]);
  });

  it('R7.13: cat ~/.aws/credentials names the deny list and --allow-read (direct and pooled)', async () => {
    for (const { engine } of [fixture, pooled]) {
      const result = await run(engine, bash('cat ~/.aws/credentials'));
      expect(result.status).toBe('failed');
      expect(result.output).toContain('Permission denied');
      expect(result.output).not.toContain('aws_secret_access_key');
      expect(result.output).toContain(
        `\n${MARK} \`~/.aws/credentials\` is in the credentials deny list (AWS credentials): commands cannot read it. If this tool needs it, restart Ahma with --allow-read ~/.aws/credentials.\n`,
      );
    }
  });

  it('R7.13: touch outside the writable paths names them', async () => {
    const result = await run(fixture.engine, ['touch', '/opt/ahma-test-x']);
    expect(result.status).toBe('failed');
    expect(result.output).toContain(
      `${MARK} \`/opt/ahma-test-x\` is outside the writable paths (the scope ${fixture.scope}`,
    );
    expect(result.output).toContain('--allow-write PATH');
  });

  it("R7.13: Ahma's private state is explained without advice to allow it", async () => {
    const file = join(fixture.engine.state.root, 'refusal-hints-test');
    await writeFile(file, 'x');
    const result = await run(fixture.engine, ['cat', file]);
    expect(result.status).toBe('failed');
    expect(result.output).toContain(
      "is Ahma's private state: commands can never read or write it.",
    );
    expect(result.output).not.toContain('--allow-read');
  });

  it('R7.13: a refusal by plain file modes gets no hint', async (context) => {
    const file = join(fixture.scope, 'closed.txt');
    await writeFile(file, 'x');
    await chmod(file, 0o000);
    const result = await run(fixture.engine, ['cat', 'closed.txt']);
    // With root's capabilities kept, modes do not refuse root: nothing to test.
    if (result.exitCode === 0) context.skip();
    expect(result.output).toContain('Permission denied');
    expect(result.output).not.toContain(MARK);
  });

  it('R7.13: a command that succeeds gets nothing, whatever its output says', async () => {
    const result = await run(
      fixture.engine,
      bash(
        "echo 'cat: /etc/shadow: Permission denied'; echo \"touch: cannot touch '/opt/x': Permission denied\"",
      ),
    );
    expect(result.status).toBe('completed');
    expect(result.output).not.toContain(MARK);
  });

  it('R7.13: a truncated output keeps its marker and log, and the hint follows its tail', async () => {
    const result = await run(
      fixture.engine,
      bash('head -c 8000 /dev/zero | tr "\\0" a; echo; cat ~/.aws/credentials'),
    );
    expect(result.status).toBe('failed');
    expect(result.truncated).toBe(true);
    expect(result.fullOutputPath).toBeDefined();
    expect(result.output).toContain(`full output: ${String(result.fullOutputPath)}; `);
    expect(result.output).toMatch(
      /Permission denied\n\n\[ahma sandbox\] `~\/\.aws\/credentials` is in the credentials deny list[^\n]*\n$/,
    );
  });

  it('R7.13: the executor passes refused paths to the hand-off callback', async () => {
    const { engine } = fixture;
    const executor = new Executor({
      sandbox: engine.sandbox,
      env: engine.executor.env,
      limits: engine.executor.limits,
      explainHandoff: (path) =>
        path === join(fixture.scope, '.git/config') ? 'a hand-off file (test)' : undefined,
    });
    const result = await executor.run({
      command: {
        kind: 'argv',
        argv: bash(
          'echo "error: could not lock config file .git/config: Read-only file system" >&2; exit 255',
        ),
      },
      cwd: fixture.scope,
      logName: 'refusal-hints-handoff',
    });
    expect(result.output).toContain(`${MARK} a hand-off file (test)\n`);
  });
});
