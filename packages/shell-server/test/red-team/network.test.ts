// Red team, R7.15: --network none. A listener on 127.0.0.1 stands for a loopback service (a
// database, Docker's API, another user's dev server) and an HTTP server of the same identity
// for Ahma's own port; a command of a `--network none` server tries TCP (bash's /dev/tcp, python,
// IPv6), UDP and a raw netlink socket: none reaches anything, the listener accepts nothing. The
// same attempts from a default server (`--network host`) do connect: the mode is what stops them.
// Run as root and as an ordinary user.
import { createServer, type Server as NetServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

let listener: NetServer;
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

const attempts = (target: number) =>
  [
    `(exec 3<>/dev/tcp/127.0.0.1/${String(target)}) 2>&1 && echo tcp:reached || echo tcp:refused`,
    `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${String(target)}), 2); print("py:reached")' 2>&1 | tail -1`,
    `python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", ${String(target)})); print("udp:sent")' 2>&1 | tail -1`,
    `python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_STREAM); print("tcp6:open")' 2>&1 | tail -1`,
    `python3 -c 'import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW); print("netlink:open")' 2>&1 | tail -1`,
  ].join('\n');

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { args: ['--network', 'none'] });

  it('R7.15: under --network none a command reaches no loopback service and not Ahma’s own HTTP port; UDP, IPv6 and netlink sockets are refused', async () => {
    const before = accepted;
    const result = await server().sh(attempts(port));
    expect(result.output).toContain('tcp:refused');
    expect(result.output).not.toMatch(/reached|udp:sent|tcp6:open|netlink:open/);
    expect(result.output).toMatch(/Permission denied/);
    expect(accepted).toBe(before);
    const http = await seat().httpServer();
    try {
      const ownPort = new URL(http.url).port;
      const own = await server().sh(
        `(exec 3<>/dev/tcp/127.0.0.1/${ownPort}) 2>&1 && echo own:reached || echo own:refused`,
      );
      expect(own.output).toContain('own:refused');
    } finally {
      await http.close();
    }
  });

  it('R7.15: the default, --network host, changes nothing: the same command reaches the listener', async () => {
    const host = await seat().server([]);
    try {
      const before = accepted;
      const result = await host.sh(attempts(port));
      expect(result.output).toContain('tcp:reached');
      expect(result.output).toContain('py:reached');
      expect(result.output).toContain('udp:sent');
      expect(accepted).toBeGreaterThan(before);
    } finally {
      await host.close();
    }
  });
});
