// R7.15: --network none. Through the helper and through a real engine's warm pool: a command gets
// no socket of any family but unix ones (TCP and UDP of both IP versions, netlink, raw), so a real
// listener on 127.0.0.1 is out of reach, while socketpair() (pipes for node, python, shells) works;
// --network host (the default) changes nothing.
//
// R7.16: --network proxy (the helper's --proxy-port P). A command may make TCP sockets and connect
// them to port P alone (a listener of the test stands in for the egress proxy); another port, over
// IPv4 or IPv6, fails with EACCES from Landlock; UDP, raw, packet and netlink sockets and MPTCP
// fail with EACCES from seccomp, and so do TCP Fast Open sends (which connect past Landlock's
// hook), bind() and listen() (whose implicit bind would escape Landlock too). Through the helper,
// through createSandbox, and through a warm pool whose every unit inherits it.
import { execFile, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, realpath, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShellPool } from '../../src/process/shell-pool.js';
import type { Command } from '../../src/process/execution-types.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/sandbox.js';
import {
  bash,
  engineFixture,
  refusal,
  removeAll,
  run,
  varTmpDir,
  type EngineFixture,
} from '../support/engine.js';
import { buildHelperIfStale, helper } from '../support/sandbox-helper.js';

const exec = promisify(execFile);

/** Python: each family's socket, then a connect to the listener, then a socketpair. */
const PROBE = (port: number) =>
  [
    'import socket',
    'kinds = [("tcp4", socket.AF_INET, socket.SOCK_STREAM), ("tcp6", socket.AF_INET6, socket.SOCK_STREAM),',
    '         ("udp4", socket.AF_INET, socket.SOCK_DGRAM), ("udp6", socket.AF_INET6, socket.SOCK_DGRAM),',
    '         ("netlink", socket.AF_NETLINK, socket.SOCK_RAW), ("packet", socket.AF_PACKET, socket.SOCK_DGRAM)]',
    'for name, family, kind in kinds:',
    '    try:',
    '        socket.socket(family, kind).close(); print(name, "open")',
    '    except OSError as e: print(name, e.strerror)',
    'try:',
    `    socket.create_connection(("127.0.0.1", ${String(port)}), 2).close(); print("connect reached")`,
    'except OSError as e: print("connect", e.strerror)',
    'a, b = socket.socketpair(); a.send(b"x"); print("pair", b.recv(1).decode())',
  ].join('\n');

/**
 * Python, for --network proxy: one line per attempt, `NAME ok` or `NAME ERRNO` (EACCES, ...).
 * `proxy` is the one port the sandbox lets commands connect to, `other` a listener it must not.
 */
const PROXY_PROBE = (proxy: number, other: number) =>
  [
    'import errno, socket',
    'S = socket',
    'def attempt(name, f):',
    '    try:',
    '        f(); print(name, "ok")',
    '    except OSError as e: print(name, errno.errorcode.get(e.errno, e.errno))',
    'def connect(family, address):',
    '    s = S.socket(family, S.SOCK_STREAM); s.settimeout(2); s.connect(address); s.close()',
    'def make(family, kind, protocol=0):',
    '    S.socket(family, kind, protocol).close()',
    'def fastopen():',
    `    S.socket(S.AF_INET, S.SOCK_STREAM).sendto(b"x", 0x20000000, ("127.0.0.1", ${String(other)}))`,
    'def bind():',
    '    S.socket(S.AF_INET, S.SOCK_STREAM).bind(("127.0.0.1", 0))',
    'def listen():',
    '    S.socket(S.AF_INET, S.SOCK_STREAM).listen(1)',
    'def pair():',
    '    a, b = S.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"',
    `attempt("connect-proxy", lambda: connect(S.AF_INET, ("127.0.0.1", ${String(proxy)})))`,
    `attempt("connect-other", lambda: connect(S.AF_INET, ("127.0.0.1", ${String(other)})))`,
    `attempt("connect-other6", lambda: connect(S.AF_INET6, ("::1", ${String(other)})))`,
    'attempt("tcp-flags", lambda: make(S.AF_INET, S.SOCK_STREAM | S.SOCK_NONBLOCK | S.SOCK_CLOEXEC))',
    'attempt("tcp-protocol", lambda: make(S.AF_INET6, S.SOCK_STREAM, S.IPPROTO_TCP))',
    'attempt("mptcp", lambda: make(S.AF_INET, S.SOCK_STREAM, 262))',
    'attempt("udp4", lambda: make(S.AF_INET, S.SOCK_DGRAM))',
    'attempt("udp6", lambda: make(S.AF_INET6, S.SOCK_DGRAM))',
    'attempt("raw", lambda: make(S.AF_INET, S.SOCK_RAW, S.IPPROTO_ICMP))',
    'attempt("netlink", lambda: make(S.AF_NETLINK, S.SOCK_RAW))',
    'attempt("packet", lambda: make(S.AF_PACKET, S.SOCK_DGRAM))',
    'attempt("fastopen", fastopen)',
    'attempt("bind", bind)',
    'attempt("listen", listen)',
    'attempt("pair", pair)',
  ].join('\n');

/** The lines PROXY_PROBE prints when the sandbox holds commands to the proxy's port. */
const PROXY_CONFINED = [
  'connect-proxy ok',
  'connect-other EACCES',
  'connect-other6 EACCES',
  'tcp-flags ok',
  'tcp-protocol ok',
  'mptcp EACCES',
  'udp4 EACCES',
  'udp6 EACCES',
  'raw EACCES',
  'netlink EACCES',
  'packet EACCES',
  'fastopen EACCES',
  'bind EACCES',
  'listen EACCES',
  'pair ok',
];

/** A listener on 127.0.0.1 that counts the connections it accepted. */
interface Listener {
  readonly server: Server;
  readonly port: number;
  readonly accepted: () => number;
}

async function listen(): Promise<Listener> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, port, accepted: () => accepted };
}

let listener: Listener;
/** A second listener, never to be reached in proxy mode (the proxy is `listener`). */
let other: Listener;
let port = 0;
const accepted = () => listener.accepted();

beforeAll(async () => {
  listener = await listen();
  other = await listen();
  port = listener.port;
});

afterAll(async () => {
  for (const { server } of [listener, other]) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const expectNone = (output: string) => {
  for (const name of ['tcp4', 'tcp6', 'udp4', 'udp6', 'netlink', 'packet']) {
    expect(output).toMatch(new RegExp(`^${name} Permission denied$`, 'm'));
  }
  expect(output).toMatch(/^connect Permission denied$/m);
  expect(output).toMatch(/^pair x$/m);
};

describe.runIf(process.platform === 'linux')('R7.15: --network none', () => {
  beforeAll(() => buildHelperIfStale(), 60_000);

  it('R7.15: the helper with --no-network refuses every socket but unix ones; without it the listener is reached', async () => {
    const before = accepted();
    const none = await exec(helper, [
      '--read-all',
      '--no-network',
      '--',
      'python3',
      '-c',
      PROBE(port),
    ]);
    expectNone(none.stdout);
    expect(accepted()).toBe(before);
    const host = await exec(helper, ['--read-all', '--', 'python3', '-c', PROBE(port)]);
    expect(host.stdout).toMatch(/^tcp4 open$/m);
    expect(host.stdout).toMatch(/^connect reached$/m);
  });

  describe('through an engine and its warm pool', () => {
    let own: EngineFixture;
    beforeAll(async () => {
      own = await engineFixture({ noShellPool: false, network: 'none' });
    }, 60_000);
    afterAll(() => own.dispose());

    it("R7.15: a command in a warm shell, and bash's /dev/tcp, reach nothing", async () => {
      const before = accepted();
      expect(own.engine.sandbox.network).toBe('none');
      const probe = await run(own.engine, ['python3', '-c', PROBE(port)]);
      expectNone(probe.output);
      const shell = await own.engine.executor.run({
        command: { kind: 'shell', script: `exec 3<>/dev/tcp/127.0.0.1/${String(port)}` },
        cwd: own.scope,
        logName: 'network',
      });
      expect(shell.output).toContain('Permission denied');
      const curl = await run(
        own.engine,
        bash(
          `command -v curl >/dev/null || exit 0; curl -sS -m 2 http://127.0.0.1:${String(port)}/`,
        ),
      );
      if (curl.output !== '') expect(curl.exitCode).not.toBe(0);
      expect(accepted()).toBe(before);
    });
  });
});

describe.runIf(process.platform === 'linux')('R7.16: --network proxy', () => {
  beforeAll(() => buildHelperIfStale(), 60_000);

  /** The probe's lines, each `NAME RESULT`. */
  const lines = (output: string) => output.split('\n').filter((line) => line !== '');

  it('R7.16: the helper with --proxy-port P lets TCP connect to P alone; other ports (IPv4, IPv6), UDP, raw, packet, netlink, MPTCP, TCP Fast Open, bind and listen fail with EACCES; socketpair works', async () => {
    const [proxyBefore, otherBefore] = [listener.accepted(), other.accepted()];
    const proxied = await exec(helper, [
      '--read-all',
      '--proxy-port',
      String(listener.port),
      '--',
      'python3',
      '-c',
      PROXY_PROBE(listener.port, other.port),
    ]);
    expect(lines(proxied.stdout)).toEqual(PROXY_CONFINED);
    await expect.poll(() => listener.accepted()).toBe(proxyBefore + 1);
    // Neither the refused connects nor the Fast Open send reached the other listener.
    expect(other.accepted()).toBe(otherBefore);
    // Without it, the same probe reaches both (the refusals above are the sandbox's).
    const host = await exec(helper, [
      '--read-all',
      '--',
      'python3',
      '-c',
      PROXY_PROBE(listener.port, other.port),
    ]);
    expect(lines(host.stdout)).toEqual(
      expect.arrayContaining(['connect-other ok', 'udp4 ok', 'fastopen ok', 'bind ok']),
    );
  });

  it('R7.16: --proxy-port with an unix socket allowance still refuses listen() (a unix server needs host or none)', async () => {
    const result = await exec(helper, [
      '--read-all',
      '--allow-unix-sockets',
      '--proxy-port',
      String(listener.port),
      '--',
      'python3',
      '-c',
      [
        'import errno, socket',
        's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); print("unix ok")',
        'try: s.listen(1)',
        'except OSError as e: print("listen", errno.errorcode[e.errno])',
      ].join('\n'),
    ]);
    expect(result.stdout).toBe('unix ok\nlisten EACCES\n');
  });

  it('R7.16: with --no-network too, a TCP Fast Open send on an inherited TCP socket fails with EACCES and reaches nothing', () => {
    const before = other.accepted();
    // An unconnected TCP socket made outside the sandbox, passed down as descriptor 3.
    const outer = [
      'import socket, subprocess, sys',
      's = socket.socket(socket.AF_INET, socket.SOCK_STREAM)',
      'if s.fileno() != 3: import os; os.dup2(s.fileno(), 3)',
      'inner = "import errno, socket\\n" + \\',
      '    "s = socket.socket(fileno=3)\\n" + \\',
      `    "try: s.sendto(b'x', 0x20000000, ('127.0.0.1', ${String(other.port)})); print('fastopen ok')\\n" + \\`,
      '    "except OSError as e: print(\'fastopen\', errno.errorcode[e.errno])\\n"',
      'sys.exit(subprocess.run(sys.argv[1:] + ["python3", "-c", inner], pass_fds=[3]).returncode)',
    ].join('\n');
    const result = spawnSync('python3', ['-c', outer, helper, '--read-all', '--no-network', '--'], {
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('fastopen EACCES\n');
    expect(other.accepted()).toBe(before);
  });

  it('R7.16: --proxy-port outside 1..65535, or with --no-network or --unconfined, is a usage error (exit 125)', () => {
    const usage = (args: readonly string[]) =>
      spawnSync(helper, ['--read-all', ...args, '--', 'echo', 'ran'], { encoding: 'utf8' });
    for (const value of ['0', '65536', 'x', '-1', '']) {
      const result = usage(['--proxy-port', value]);
      expect(result.status).toBe(125);
      expect(result.stderr).toContain('--proxy-port needs a TCP port (1..65535)');
    }
    for (const flag of ['--no-network', '--unconfined']) {
      for (const args of [
        [flag, '--proxy-port', '8080'],
        ['--proxy-port', '8080', flag],
      ]) {
        const result = usage(args);
        expect(result.status).toBe(125);
        expect(result.stdout).toBe('');
        expect(result.stderr).toMatch(/--proxy-port (and --no-network exclude|needs the sandbox)/);
      }
    }
  });

  const strace = spawnSync('strace', ['-V']).status === 0;
  it.runIf(strace)(
    'R7.16: a kernel below Landlock ABI 4 cannot confine TCP connects: the helper refuses --proxy-port (exit 125) and runs nothing',
    () => {
      // strace makes the ABI query (the first landlock_create_ruleset) answer 3.
      const result = spawnSync(
        'strace',
        [
          '-f',
          '-qq',
          '-o',
          '/dev/null',
          '-e',
          'trace=landlock_create_ruleset',
          '-e',
          'inject=landlock_create_ruleset:retval=3:when=1',
          helper,
          '--read-all',
          '--proxy-port',
          '8080',
          '--',
          'echo',
          'ran unconfined',
        ],
        { encoding: 'utf8' },
      );
      expect(result.status).toBe(125);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        '--proxy-port needs Landlock ABI 4 (Linux 6.7) to confine TCP connects',
      );
    },
  );

  describe('createSandbox', () => {
    let scope: string;
    let cacheParent: string;
    let cacheRoot: string;
    let fakeDir: string;
    beforeAll(async () => {
      scope = await varTmpDir('scope');
      cacheParent = await varTmpDir('cache');
      cacheRoot = join(cacheParent, 'c');
      fakeDir = await realpath(await mkdtemp('/var/tmp/ahma-eng-fake-helper-'));
    });
    afterAll(() => removeAll([scope, cacheParent, fakeDir]));

    it('R7.16: proxy needs a port 1..65535 (CONFIG_INVALID), for the server and for one command', async () => {
      for (const proxyPort of [undefined, 0, 70000, 8.5]) {
        await refusal(
          createSandbox({ scope, cacheRoot, network: 'proxy', proxyPort }),
          'CONFIG_INVALID',
          '--network proxy',
        );
      }
      const box = await createSandbox({ scope, cacheRoot, network: 'host' });
      expect(() => box.wrap(['true'], { network: 'proxy' })).toThrow(/--network proxy/);
    });

    it('R7.16: the helper gets --proxy-port P for wrap() and the pool, and a command its own mode', async () => {
      const box = await createSandbox({ scope, cacheRoot, network: 'proxy', proxyPort: 4321 });
      expect(box).toMatchObject({ network: 'proxy', proxyPort: 4321 });
      const flags = (args: readonly string[]) => args.slice(0, args.indexOf('--'));
      const wrapped = flags(box.wrap(['true']).args);
      expect(wrapped.join(' ')).toContain('--proxy-port 4321');
      expect(wrapped).not.toContain('--no-network');
      expect(flags(box.poolCommand(2)?.args ?? []).join(' ')).toContain('--proxy-port 4321');
      const none = flags(box.wrap(['true'], { network: 'none' }).args);
      expect(none).toContain('--no-network');
      expect(none).not.toContain('--proxy-port');
      const host = await createSandbox({ scope, cacheRoot });
      expect(host.proxyPort).toBeUndefined();
      expect(flags(host.wrap(['true']).args)).not.toContain('--proxy-port');
      const own = flags(host.wrap(['true'], { network: 'proxy', proxyPort: 5555 }).args);
      expect(own.join(' ')).toContain('--proxy-port 5555');
    });

    it('R7.16: below Landlock ABI 4, proxy is refused (SANDBOX_UNAVAILABLE) with the fix; none and host still start', async () => {
      const fake = join(fakeDir, 'ahma-sandbox');
      await writeFile(fake, '#!/bin/sh\necho landlock-abi=3\necho handoff=none reason=fake\n');
      await chmod(fake, 0o755);
      const error = await refusal(
        createSandbox({ scope, cacheRoot, helperPath: fake, network: 'proxy', proxyPort: 4321 }),
        'SANDBOX_UNAVAILABLE',
        'ABI 3',
        'Linux 6.7',
        '--network none',
        '--network host',
      );
      expect(error.message).toContain('Landlock ABI 4');
      for (const network of ['none', 'host'] as const) {
        const box = await createSandbox({ scope, cacheRoot, helperPath: fake, network });
        expect(box.abi).toBe(3);
      }
      const host = await createSandbox({ scope, cacheRoot, helperPath: fake });
      expect(() => host.wrap(['true'], { network: 'proxy', proxyPort: 4321 })).toThrow(/ABI 3/);
    });

    it('R7.16: --no-sandbox enforces no mode: proxy is not required to have a port, and a warning says so', async () => {
      const box = await createSandbox({ scope, cacheRoot, disabled: true, network: 'proxy' });
      expect(box).toMatchObject({ network: 'host', proxyPort: undefined });
      expect(box.warnings.join('\n')).toContain('--network proxy is NOT enforced');
    });
  });

  describe('through a warm pool (--pool with --proxy-port)', () => {
    let scope: string;
    let cacheParent: string;
    let cacheRoot: string;
    let box: Sandbox;
    let pool: ShellPool;
    beforeAll(async () => {
      scope = await varTmpDir('scope');
      cacheParent = await varTmpDir('cache');
      cacheRoot = join(cacheParent, 'c');
      box = await createSandbox({
        scope,
        cacheRoot,
        home: homedir(),
        network: 'proxy',
        proxyPort: listener.port,
      });
      pool = new ShellPool({
        sandbox: box,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: homedir() },
        size: 1,
      });
      pool.start();
    }, 60_000);
    afterAll(async () => {
      await pool.close();
      await removeAll([scope, cacheParent]);
    });

    const runPooled = async (command: Command, env?: Record<string, string>) => {
      const running = pool.take(command, scope, env);
      if (running === undefined) throw new Error('the pool zygote is not running');
      let output = '';
      running.onOutput((chunk) => (output += chunk.toString('utf8')));
      const exit = await running.exit;
      return { output, ...exit };
    };

    it('R7.16: an argv unit and a shell unit inherit it: the proxy port alone is reached, with the per-command proxy variable', async () => {
      const [proxyBefore, otherBefore] = [listener.accepted(), other.accepted()];
      const argv = await runPooled({
        kind: 'argv',
        argv: ['python3', '-c', PROXY_PROBE(listener.port, other.port)],
      });
      expect(lines(argv.output)).toEqual(PROXY_CONFINED);
      const proxyUrl = `http://ahma:token-1@127.0.0.1:${String(listener.port)}`;
      const shell = await runPooled(
        {
          kind: 'shell',
          script: [
            'echo "proxy=$HTTPS_PROXY"',
            `exec 3<>/dev/tcp/127.0.0.1/${String(listener.port)} && echo reached`,
            `exec 4<>/dev/tcp/127.0.0.1/${String(other.port)}`,
          ].join('\n'),
        },
        { HTTPS_PROXY: proxyUrl },
      );
      expect(shell.output).toMatch(new RegExp(`^proxy=${proxyUrl}\nreached\n`));
      expect(shell.output).toContain('Permission denied');
      expect(shell.code).not.toBe(0);
      await expect.poll(() => listener.accepted()).toBe(proxyBefore + 2);
      expect(other.accepted()).toBe(otherBefore);
    });
  });
});
