// The Linux sandbox exec helper (native/ahma-sandbox.c), run for real against the kernel: Landlock
// confinement (R7.2), the AF_UNIX seccomp filter, and process supervision (SPEC §3: one merged
// output stream, exit status passed through, no orphan or zombie survives).
//
// Scopes live under /var/tmp, not /tmp: the server grants /tmp by design, so a write that lands in
// /tmp would prove nothing about the scope.
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildHelperIfStale,
  helper,
  isAlive,
  isGone,
  newMarker,
  pidsWithMarker,
  quote,
  waitFor,
} from '../support/sandbox-helper.js';

const { errno } = constants;

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: readonly string[], stdio: StdioOptions = ['ignore', 'pipe', 'pipe']) {
  return spawn(helper, args, { stdio, cwd: scope });
}

function finish(child: ChildProcess): Promise<Result> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      }),
    );
  });
}

const run = (args: readonly string[], stdio?: StdioOptions) => finish(start(args, stdio));

/** `bash -c SCRIPT` confined to the test's scope, with extra helper options. */
/** Makes the directory (and its parents) and returns it. */
const mkdirAndReturn = async (path: string) => {
  await mkdir(path, { recursive: true });
  return path;
};

const sandboxed = (script: string, options: readonly string[] = []) =>
  run(['--read-all', '--rw', scope, ...options, '--', 'bash', '-c', script]);

let abi = 0;
let scope = '';
let outside = '';
const strays: ChildProcess[] = [];

describe.runIf(process.platform === 'linux')('ahma-sandbox (Linux exec helper)', () => {
  beforeAll(async () => {
    buildHelperIfStale();
    const probe = await run(['--probe']);
    abi = Number(/^landlock-abi=(\d+)$/m.exec(probe.stdout)?.[1] ?? 0);
  }, 60_000);

  beforeEach(async () => {
    scope = await mkdtemp('/var/tmp/ahma-scope-');
    outside = await mkdtemp('/var/tmp/ahma-outside-');
  });

  afterEach(async () => {
    for (const child of strays.splice(0)) child.kill('SIGKILL');
    await rm(scope, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  afterAll(() => {
    for (const child of strays.splice(0)) child.kill('SIGKILL');
  });

  describe('probe and usage', () => {
    it('R7.2, R7.11: --probe prints landlock-abi=N with N >= 1, then whether hand-off mounts can be made, and exits 0', async () => {
      const result = await run(['--probe']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^landlock-abi=\d+\nhandoff=(mount|none reason=.+)\n$/);
      expect(abi).toBeGreaterThanOrEqual(1);
    });

    it('R7.2: a --rw or --ro path that does not exist is refused with exit 125', async () => {
      const missing = join(outside, 'missing');
      for (const flag of ['--rw', '--ro']) {
        const result = await run(['--read-all', flag, missing, '--', 'true']);
        expect(result.code).toBe(125);
        expect(result.stderr).toContain(`ahma-sandbox: ${flag} ${missing}: No such file`);
      }
    });

    it('R7.2: usage errors (no "-- COMMAND", unknown option) exit 125', async () => {
      expect((await run(['--read-all', '--rw', scope])).code).toBe(125);
      const unknown = await run(['--frobnicate', '--', 'true']);
      expect(unknown.code).toBe(125);
      expect(unknown.stderr).toContain("unknown argument '--frobnicate'");
    });
  });

  describe('filesystem confinement', () => {
    it('R7.2: creating, making directories and renaming inside the --rw scope works', async () => {
      const result = await sandboxed('echo data > f && mkdir d && mv f d/g && cat d/g');
      expect(result).toMatchObject({ code: 0, stdout: 'data\n' });
      expect(await readFile(join(scope, 'd', 'g'), 'utf8')).toBe('data\n');
    });

    it('R7.2: creating a file outside the scope fails with Permission denied', async () => {
      const target = join(outside, 'created');
      const result = await sandboxed(`echo x > ${quote(target)}`);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
    });

    it('R7.2: mkdir outside the scope fails with Permission denied', async () => {
      const target = join(outside, 'dir');
      const result = await sandboxed(`mkdir ${quote(target)}`);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
    });

    it('R7.2: renaming a file from the scope out to a sibling directory fails with EACCES', async () => {
      await writeFile(join(scope, 'file'), 'keep');
      const script = `try { require('fs').renameSync('file', ${JSON.stringify(join(outside, 'moved'))}); console.log('renamed') } catch (e) { console.log(e.code) }`;
      const result = await run(['--read-all', '--rw', scope, '--', process.execPath, '-e', script]);
      expect(result).toMatchObject({ code: 0, stdout: 'EACCES\n' });
      expect(await readFile(join(scope, 'file'), 'utf8')).toBe('keep');
      expect(existsSync(join(outside, 'moved'))).toBe(false);
    });

    it('R7.2: writing through a symlink inside the scope that points outside fails', async () => {
      const existing = join(outside, 'existing');
      await writeFile(existing, 'original\n');
      await symlink(existing, join(scope, 'to-existing'));
      await symlink(join(outside, 'new-file'), join(scope, 'to-new'));
      const result = await sandboxed(
        'echo x > to-existing; echo y > to-new; echo z >> to-existing',
      );
      expect(result.stdout.match(/Permission denied/g)).toHaveLength(3);
      expect(await readFile(existing, 'utf8')).toBe('original\n');
      expect(existsSync(join(outside, 'new-file'))).toBe(false);
    });

    it('R7.2: a setsid-daemonised grandchild is confined too', async () => {
      const target = join(outside, 'daemon-file');
      const report = join(scope, 'daemon-report');
      const daemon = `if echo x > ${quote(target)}; then echo allowed; else echo denied; fi > ${quote(report)}.tmp 2>&1; mv ${quote(report)}.tmp ${quote(report)}`;
      const result = await sandboxed(
        `setsid -f bash -c ${quote(daemon)}; for i in $(seq 250); do [ -e ${quote(report)} ] && exit 0; sleep 0.02; done; exit 1`,
      );
      expect(result.code).toBe(0);
      const text = await readFile(report, 'utf8');
      expect(text).toContain('Permission denied');
      expect(text).toContain('denied\n');
      expect(text).not.toContain('allowed');
      expect(existsSync(target)).toBe(false);
    });

    it('R7.2: --ro grants read and execute but not write', async () => {
      await writeFile(join(outside, 'readable'), 'content\n');
      const result = await run([
        '--read-all',
        '--rw',
        scope,
        '--ro',
        outside,
        '--',
        'bash',
        '-c',
        `cat ${quote(join(outside, 'readable'))}; echo x > ${quote(join(outside, 'readable'))}`,
      ]);
      expect(result.stdout).toMatch(/^content\n.*Permission denied/s);
      expect(await readFile(join(outside, 'readable'), 'utf8')).toBe('content\n');
    });

    it('R7.2: nothing but the --rw paths and device nodes is writable, not even /tmp', async () => {
      const target = `/tmp/ahma-helper-test-${process.pid}-${Date.now()}`;
      try {
        const result = await sandboxed(`echo x > ${quote(target)}`);
        expect(result.stdout).toContain('Permission denied');
        expect(existsSync(target)).toBe(false);
      } finally {
        await rm(target, { force: true });
      }
    });

    it('R7.2: device nodes stay usable: > /dev/null (needs TRUNCATE), /dev/zero, /dev/urandom', async () => {
      const result = await sandboxed(
        'echo x > /dev/null && head -c 3 /dev/zero | wc -c && head -c 5 /dev/urandom | wc -c',
      );
      expect(result).toMatchObject({ code: 0, stdout: '3\n5\n' });
    });

    it('R7.2: reading /etc/passwd works', async () => {
      const result = await sandboxed('head -n 1 /etc/passwd');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^\w[\w-]*:/);
    });

    it('R7.2: git --version and node -e run inside', async () => {
      const git = await run(['--read-all', '--rw', scope, '--', 'git', '--version']);
      expect(git).toMatchObject({ code: 0 });
      expect(git.stdout).toMatch(/^git version \d/);
      const node = await run([
        '--read-all',
        '--rw',
        scope,
        '--',
        process.execPath,
        '-e',
        'console.log(6 * 7)',
      ]);
      expect(node).toMatchObject({ code: 0, stdout: '42\n' });
    });

    it('R7.2: pipes and redirects work inside the scope', async () => {
      const result = await sandboxed('echo hi | tr a-z A-Z > out && cat out');
      expect(result).toMatchObject({ code: 0, stdout: 'HI\n' });
      expect(await readFile(join(scope, 'out'), 'utf8')).toBe('HI\n');
    });

    it('R7.2: --unconfined applies neither Landlock nor seccomp', async () => {
      const target = join(outside, 'written');
      const result = await run([
        '--unconfined',
        '--',
        'bash',
        '-c',
        `echo free > ${quote(target)}`,
      ]);
      expect(result.code).toBe(0);
      expect(await readFile(target, 'utf8')).toBe('free\n');
    });

    it('R7.5: confinement is the kernel, not the command text: obfuscation does not help, a scary string runs', async () => {
      const target = join(outside, 'obfuscated');
      const [head, tail] = [target.slice(0, 9), target.slice(9)];
      const denied = await sandboxed(`p=${quote(head)}; eval "ec""ho x > $p${quote(tail)}"`);
      expect(denied.stdout).toContain('Permission denied');
      expect(existsSync(target)).toBe(false);
      const harmless = await sandboxed(`echo 'rm -rf / ; curl evil | sh'`);
      expect(harmless).toMatchObject({ code: 0, stdout: 'rm -rf / ; curl evil | sh\n' });
    });
  });

  describe('sockets and signals', () => {
    async function startUnixServer(path: string): Promise<ChildProcess> {
      const code = [
        'import socket, sys',
        's = socket.socket(socket.AF_UNIX)',
        's.bind(sys.argv[1])',
        's.listen(8)',
        'print("ready", flush=True)',
        'while True:',
        '    c, _ = s.accept()',
        '    c.sendall(b"pong")',
        '    c.close()',
      ].join('\n');
      const server = spawn('python3', ['-c', code, path], { stdio: ['ignore', 'pipe', 'inherit'] });
      strays.push(server);
      await new Promise<void>((resolve, reject) => {
        server.on('error', reject);
        server.on('exit', (status) => reject(new Error(`python3 server exited with ${status}`)));
        server.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('ready')) resolve();
        });
      });
      return server;
    }

    const client = `const c = require('net').connect(process.argv[1]);
      c.on('data', (d) => console.log('got ' + d));
      c.on('error', (e) => { console.log('error ' + e.code); process.exitCode = 1; });`;

    it('R7.2: connecting to a unix socket served outside the scope is refused (EACCES)', async () => {
      const path = join(outside, 'server.sock');
      await startUnixServer(path);
      const result = await run([
        '--read-all',
        '--rw',
        scope,
        '--',
        process.execPath,
        '-e',
        client,
        path,
      ]);
      expect(result).toMatchObject({ code: 1, stdout: 'error EACCES\n' });
    });

    it('R7.2: with --allow-unix-sockets the same connection succeeds', async () => {
      const path = join(outside, 'server.sock');
      await startUnixServer(path);
      const result = await run([
        '--read-all',
        '--rw',
        scope,
        '--allow-unix-sockets',
        '--',
        process.execPath,
        '-e',
        client,
        path,
      ]);
      expect(result).toMatchObject({ code: 0, stdout: 'got pong\n' });
    });

    it('R7.2: socketpair (pipes for libuv, Python, shells) stays allowed', async () => {
      const script = `require('child_process').exec('echo via-child', (e, out) => process.stdout.write(out))`;
      const result = await run(['--read-all', '--rw', scope, '--', process.execPath, '-e', script]);
      expect(result).toMatchObject({ code: 0, stdout: 'via-child\n' });
    });

    it('R7.2: on ABI >= 6 a signal to a process outside the sandbox is refused (EPERM)', async (context) => {
      if (abi < 6) context.skip();
      const victim = spawn('sleep', ['300'], { stdio: 'ignore' });
      strays.push(victim);
      const pid = victim.pid ?? 0;
      const result = await sandboxed(`kill -TERM ${pid}`);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('Operation not permitted');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(isAlive(pid)).toBe(true);
      expect(victim.exitCode).toBeNull();
    });
  });

  describe('defence in depth (R7.6)', () => {
    it('R7.6: moving and hard-linking across directories inside the scope still works (the command domain grants REFER)', async () => {
      const result = await sandboxed(
        'mkdir -p a b && echo x > a/f && mv a/f b/f && ln b/f a/g && cat a/g',
      );
      expect(result).toMatchObject({ code: 0, stdout: 'x\n' });
    });

    it('R7.6: a command holds no capability; --keep-capabilities keeps them', async () => {
      const caps = await sandboxed('grep ^Cap /proc/self/status');
      expect(caps.code).toBe(0);
      for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) {
        expect(caps.stdout).toMatch(new RegExp(`^${set}:\\s+0+$`, 'm'));
      }
      if (process.getuid?.() !== 0) return; // an ordinary user cannot empty the bounding set
      expect(caps.stdout).toMatch(/^CapBnd:\s+0+$/m);
      const kept = await sandboxed('grep ^CapBnd /proc/self/status', ['--keep-capabilities']);
      expect(kept.stdout).not.toMatch(/^CapBnd:\s+0+$/m);
    });

    it('R7.6: the command cannot signal its own supervisor (its domain is nested beneath)', async (context) => {
      if (abi < 6) context.skip();
      const result = await sandboxed('kill -STOP $PPID; echo "status=$?"');
      expect(result.stdout).toContain('Operation not permitted');
      expect(result.stdout).toContain('status=1');
      expect(result.code).toBe(0); // the supervisor was not stopped: it reported the exit
    });

    it('R7.6: device nodes cannot be made (even in the scope), /dev/pts and disks are out of reach', async () => {
      const result = await sandboxed(
        'mknod blk b 7 0; mknod chr c 1 11; mkfifo fifo && echo fifo-ok; ' +
          'ls /dev/pts >/dev/null 2>&1 || echo no-pts; cat /dev/kmsg 2>&1 | head -c 0; ' +
          'exec 3>/dev/kmsg || echo no-kmsg; echo x > /dev/null && echo null-ok',
      );
      expect(result.stdout).toMatch(/mknod: blk: Operation not permitted/);
      expect(result.stdout).toMatch(/mknod: chr: Operation not permitted/);
      expect(result.stdout).toContain('fifo-ok');
      expect(result.stdout).toContain('no-kmsg');
      expect(result.stdout).toContain('null-ok');
      expect(existsSync(join(scope, 'blk'))).toBe(false);
      expect(existsSync(join(scope, 'chr'))).toBe(false);
    });

    it('R7.6: set-user-ID and set-group-ID bits cannot be set; other modes can', async () => {
      const result = await sandboxed(
        'touch m && chmod u+s m; echo "suid=$?"; chmod g+s m; echo "sgid=$?"; chmod 700 m; echo "plain=$?"',
      );
      expect(result.stdout).toMatch(/suid=1/);
      expect(result.stdout).toMatch(/sgid=1/);
      expect(result.stdout).toMatch(/plain=0/);
    });

    it('R7.6: TIOCSTI is refused by the seccomp filter itself, even on a terminal the command inherits and with capabilities kept', () => {
      // A pty made here, its slave the command's stdin: only the filter stands between the command
      // and typing into it (with --keep-capabilities, root may type into any terminal).
      const tiocsti = (options: string) =>
        execFileSync(
          'python3',
          [
            '-c',
            [
              'import os, pty, subprocess, sys',
              'master, slave = pty.openpty()',
              `code = "import fcntl, termios, errno\\ntry:\\n fcntl.ioctl(0, termios.TIOCSTI, b'x')\\n print('typed')\\nexcept OSError as e:\\n print(errno.errorcode[e.errno])"`,
              `args = [sys.argv[1], *sys.argv[2].split(), '--', 'python3', '-c', code]`,
              'print(subprocess.run(args, stdin=slave, capture_output=True, text=True).stdout.strip())',
            ].join('\n'),
            helper,
            options,
          ],
          { encoding: 'utf8' },
        ).trim();
      expect(tiocsti(`--read-all --rw ${scope}`)).toBe('EPERM');
      expect(tiocsti(`--read-all --rw ${scope} --keep-capabilities`)).toBe('EPERM');
      if (process.getuid?.() === 0) expect(tiocsti('--unconfined')).toBe('typed'); // the test can fail
    });

    it('R7.6: a file cannot be created set-uid or set-gid (open or mknod with such a mode)', async () => {
      const result = await sandboxed(
        `python3 -c 'import os\nfor mode in (0o4755, 0o2755):\n  try:\n    os.close(os.open("s%o" % mode, os.O_CREAT | os.O_WRONLY, mode)); print("created")\n  except OSError as e: print(e.errno)\ntry:\n  os.mknod("n", 0o104755); print("mknod")\nexcept OSError as e: print(e.errno)'`,
      );
      expect(result.stdout).toBe('1\n1\n1\n');
      expect(existsSync(join(scope, 's4755'))).toBe(false);
    });

    it('R7.1: with --scope, a command whose working directory is not inside the scope is refused before it runs', async () => {
      const escaped = await finish(
        spawn(helper, ['--read-all', '--rw', scope, '--scope', scope, '--', 'touch', 'ran'], {
          cwd: outside,
        }),
      );
      expect(escaped.code).toBe(125);
      expect(escaped.stderr).toContain(`is not inside the scope ${scope}`);
      expect(existsSync(join(outside, 'ran'))).toBe(false);
      const inside = await run(['--read-all', '--rw', scope, '--scope', scope, '--', 'pwd']);
      expect(inside).toMatchObject({ code: 0, stdout: `${scope}\n` });
    });

    it('R7.6: a writable path swapped for a link by a command (a scope nested in another writable path) is refused, not granted', async () => {
      // The server passes real paths; a command may replace a path nested in another writable one
      // (a scope in /tmp) with a link to anywhere, and the next helper would grant that target.
      const outer = join(scope, 'outer');
      const nested = join(outer, 'nested');
      const flags = ['--read-all', '--rw', outer, '--rw', nested, '--scope', nested];
      const swap = await finish(
        spawn(
          helper,
          [
            ...flags,
            '--',
            'bash',
            '-c',
            `mv ${quote(nested)} ${quote(`${nested}.old`)} && ln -s ${quote(outside)} ${quote(nested)}`,
          ],
          { cwd: await mkdirAndReturn(nested) },
        ),
      );
      expect(swap.code).toBe(0);
      const target = join(outside, 'through-the-link');
      const next = await finish(
        spawn(helper, [...flags.slice(0, 5), '--', 'touch', target], { cwd: outer }),
      );
      expect(next.code).toBe(125);
      expect(next.stderr).toContain(`${nested} no longer resolves to itself`);
      expect(existsSync(target)).toBe(false);
      const scoped = await finish(spawn(helper, ['--scope', nested, '--', 'true'], { cwd: outer }));
      expect(scoped.code).toBe(125);
      expect(scoped.stderr).toContain(`--scope ${nested} no longer resolves to itself`);
    });

    it('R7.6: new namespaces and mounts are refused', async () => {
      const result = await sandboxed(
        'unshare -U true; echo "userns=$?"; unshare -n true; echo "netns=$?"; mount -t tmpfs none mnt 2>/dev/null; echo "mount=$?"',
      );
      expect(result.stdout).toMatch(/userns=1/);
      expect(result.stdout).toMatch(/netns=1/);
      expect(result.stdout).toMatch(/mount=(1|32)/);
    });
  });

  // A tiny C program, compiled per run, that issues raw syscalls Node and bash cannot: the ways
  // around a naive filter (x32, i386 int 0x80, junk in the upper half of socket()'s family), and a
  // seccomp filter that makes the landlock syscalls fail the way a kernel without Landlock does.
  describe.runIf(process.arch === 'x64')('raw syscalls (x86_64)', () => {
    const probeSource = String.raw`
      #define _GNU_SOURCE
      #include <errno.h>
      #include <stddef.h>
      #include <stdio.h>
      #include <stdlib.h>
      #include <string.h>
      #include <sys/prctl.h>
      #include <sys/socket.h>
      #include <sys/syscall.h>
      #include <unistd.h>
      #include <linux/filter.h>
      #include <linux/seccomp.h>
      static void report(const char *what, long ret) {
        printf("%s=%d\n", what, ret < 0 ? errno : 0);
      }
      int main(int argc, char **argv) {
        if (argc > 3 && strcmp(argv[1], "block-landlock") == 0) {
          struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 444, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | atoi(argv[2])),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
          };
          struct sock_fprog prog = {4, filter};
          prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
          prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
          execv(argv[3], argv + 3);
          return 99;
        }
        report("socket_unix_high_bits", syscall(SYS_socket, 0x100000000L | AF_UNIX, SOCK_STREAM, 0));
        report("socket_inet", syscall(SYS_socket, AF_INET, SOCK_STREAM, 0));
        report("x32_getpid", syscall(0x40000000L | SYS_getpid));
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
        printf("int80_getpid=%ld\n", ret < 0 ? -ret : 0L);
        return 0;
      }
    `;
    let probeTool = '';
    let probeDir = '';

    beforeAll(async () => {
      probeDir = await mkdtemp(join(tmpdir(), 'ahma-syscall-probe-'));
      await writeFile(join(probeDir, 'probe.c'), probeSource);
      probeTool = join(probeDir, 'probe');
      execFileSync('cc', ['-O2', '-o', probeTool, join(probeDir, 'probe.c')], { stdio: 'pipe' });
    }, 60_000);

    afterAll(async () => {
      await rm(probeDir, { recursive: true, force: true });
    });

    const parse = (stdout: string) =>
      Object.fromEntries(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.split('='))
          .map(([key, value]) => [key, Number(value)]),
      );

    it('R7.2: the seccomp filter cannot be dodged through x32 syscalls, i386 int 0x80 or junk in the upper half of the socket family', async () => {
      const confined = await run(['--read-all', '--rw', scope, '--', probeTool]);
      expect(confined.code).toBe(0);
      expect(parse(confined.stdout)).toEqual({
        socket_unix_high_bits: errno.EACCES, // the kernel reads the family as an int: AF_UNIX
        socket_inet: 0, // network is not the filter's business
        x32_getpid: errno.EPERM, // the x32 table: everything refused
        int80_getpid: errno.EPERM, // a foreign audit arch: everything refused
      });
      const unconfined = await run(['--unconfined', '--', probeTool]);
      expect(parse(unconfined.stdout)).toMatchObject({ socket_unix_high_bits: 0 });
    });

    it('R7.2: without Landlock, --probe names the reason and exits 78, and a command is refused, never run unconfined', async () => {
      const reasons: [number, RegExp][] = [
        [errno.ENOSYS, /kernel without Landlock \(needs Linux >= 5\.13 .*CONFIG_SECURITY_LANDLOCK/],
        [errno.EOPNOTSUPP, /disabled at boot \(add "landlock" to the lsm= kernel parameter\)/],
        [errno.EPERM, /blocked, e\.g\. by a container runtime's seccomp profile/],
      ];
      for (const [code, reason] of reasons) {
        const probe = await finish(
          spawn(probeTool, ['block-landlock', String(code), helper, '--probe'], {
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
        );
        expect(probe).toMatchObject({ code: 78, stdout: '' });
        expect(probe.stderr).toMatch(reason);
        expect(probe.stderr.trim().split('\n')).toHaveLength(1);
      }
      const marker = join(scope, 'ran');
      const refused = await finish(
        spawn(
          probeTool,
          [
            'block-landlock',
            String(errno.EPERM),
            helper,
            '--read-all',
            '--rw',
            scope,
            '--',
            'touch',
            marker,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        ),
      );
      expect(refused.code).toBe(78);
      expect(refused.stderr).toMatch(/Landlock unavailable: .*refusing to run the command/);
      expect(existsSync(marker)).toBe(false);
    });
  });

  describe('execution and output (SPEC §3)', () => {
    it('SPEC §3: the exit code passes through', async () => {
      expect((await sandboxed('exit 3')).code).toBe(3);
      expect((await sandboxed('true')).code).toBe(0);
    });

    it('SPEC §3: a command killed by SIGKILL makes the helper die by SIGKILL', async () => {
      const result = await sandboxed('kill -KILL $$');
      expect(result).toMatchObject({ code: null, signal: 'SIGKILL' });
    });

    it('SPEC §3: a missing command exits 127 with the message in stdout', async () => {
      const result = await run([
        '--read-all',
        '--rw',
        scope,
        '--',
        '/nonexistent/ahma-no-such-command',
      ]);
      expect(result).toMatchObject({
        code: 127,
        stdout:
          'ahma-sandbox: cannot run /nonexistent/ahma-no-such-command: No such file or directory\n',
        stderr: '',
      });
    });

    it('SPEC §3: a command that cannot be executed exits 126', async () => {
      const file = join(scope, 'not-executable');
      await writeFile(file, 'echo never\n');
      await chmod(file, 0o644);
      const result = await run(['--read-all', '--rw', scope, '--', file]);
      expect(result.code).toBe(126);
      expect(result.stdout).toBe(`ahma-sandbox: cannot run ${file}: Permission denied\n`);
    });

    it('SPEC §3: stderr is merged into stdout in chronological order', async () => {
      const result = await sandboxed('echo a; echo b >&2; echo c');
      expect(result).toMatchObject({ code: 0, stdout: 'a\nb\nc\n', stderr: '' });
    });

    it('SPEC §3: descriptor 3 is passed through to the command', async () => {
      const child = start(
        ['--read-all', '--rw', scope, '--', 'bash', '-c', 'cat <&3'],
        ['ignore', 'pipe', 'pipe', 'pipe'],
      );
      const fd3 = child.stdio[3];
      if (!(fd3 instanceof Writable)) throw new Error('fd 3 is not writable');
      fd3.end('hello');
      const result = await finish(child);
      expect(result).toMatchObject({ code: 0, stdout: 'hello' });
    });

    it('SPEC §3: the command inherits no descriptor the helper opened itself', async () => {
      const list = 'ls /proc/self/fd';
      const direct = await finish(
        spawn('bash', ['-c', list], { stdio: ['ignore', 'pipe', 'pipe'] }),
      );
      const viaHelper = await sandboxed(list);
      expect(viaHelper.code).toBe(0);
      expect(viaHelper.stdout).toBe(direct.stdout);
    });
  });

  describe('supervision (SPEC §3: no orphan survives)', () => {
    it('SPEC §3: SIGTERM to the helper kills the whole tree, setsid daemon included, leaving no zombie', async () => {
      const marker = newMarker();
      const child = start([
        '--read-all',
        '--rw',
        scope,
        '--',
        'bash',
        '-c',
        `setsid -f bash -c 'exec -a ${marker}-daemon sleep 300'
         (exec -a ${marker}-job sleep 300) &
         exec -a ${marker}-main sleep 300`,
      ]);
      const done = finish(child);
      await waitFor(() => pidsWithMarker(marker).length === 3, 'three marked processes');
      const pids = pidsWithMarker(marker);
      child.kill('SIGTERM');
      const result = await done;
      expect(result).toMatchObject({ code: null, signal: 'SIGTERM' });
      expect(pidsWithMarker(marker)).toEqual([]);
      for (const pid of pids) expect(isGone(pid), `pid ${pid}`).toBe(true);
    });

    it('SPEC §3: a background job left behind when the command exits is killed', async () => {
      const marker = newMarker();
      const started = Date.now();
      const result = await sandboxed(`(exec -a ${marker} sleep 300) & echo $!`);
      expect(result.code).toBe(0);
      expect(Date.now() - started).toBeLessThan(2_000);
      const pid = Number(result.stdout.trim());
      expect(pid).toBeGreaterThan(0);
      expect(isGone(pid)).toBe(true);
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it('SPEC §3: a process ignoring SIGTERM is SIGKILLed after --grace-ms', async () => {
      const marker = newMarker();
      const child = start([
        '--read-all',
        '--rw',
        scope,
        '--grace-ms',
        '300',
        '--',
        'bash',
        '-c',
        `trap '' TERM; exec -a ${marker} sleep 300`,
      ]);
      const done = finish(child);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked process');
      const sent = Date.now();
      child.kill('SIGTERM');
      const result = await done;
      const elapsed = Date.now() - sent;
      expect(result).toMatchObject({ code: null, signal: 'SIGKILL' });
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(5_000);
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it('SPEC §3: a leftover that ignores SIGTERM is SIGKILLed after --grace-ms and the exit code kept', async () => {
      const marker = newMarker();
      const started = Date.now();
      const result = await sandboxed(`trap '' TERM; (exec -a ${marker} sleep 300) & exit 4`, [
        '--grace-ms',
        '200',
      ]);
      expect(result.code).toBe(4);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(pidsWithMarker(marker)).toEqual([]);
    });

    it("SPEC §3: when the helper's parent dies, the helper ends its tree (PDEATHSIG)", async () => {
      const marker = newMarker();
      const parent = spawn(
        'bash',
        [
          '-c',
          `${quote(helper)} --read-all --rw ${quote(scope)} -- bash -c ${quote(`exec -a ${marker} sleep 300`)} & wait`,
        ],
        { stdio: 'ignore' },
      );
      strays.push(parent);
      await waitFor(() => pidsWithMarker(marker).length === 1, 'the marked process');
      parent.kill('SIGKILL');
      await waitFor(() => pidsWithMarker(marker).length === 0, 'the tree to be gone');
    });
  });
});
