// R7.15: --network none. Through the helper and through a real engine's warm pool: a command gets
// no socket of any family but unix ones (TCP and UDP of both IP versions, netlink, raw), so a real
// listener on 127.0.0.1 is out of reach, while socketpair() (pipes for node, python, shells) works;
// --network host (the default) changes nothing.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, engineFixture, run, type EngineFixture } from '../support/engine.js';
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

let listener: Server;
let port = 0;
let accepted = 0;

beforeAll(async () => {
  listener = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

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
    const before = accepted;
    const none = await exec(helper, [
      '--read-all',
      '--no-network',
      '--',
      'python3',
      '-c',
      PROBE(port),
    ]);
    expectNone(none.stdout);
    expect(accepted).toBe(before);
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
      const before = accepted;
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
      expect(accepted).toBe(before);
    });
  });
});
