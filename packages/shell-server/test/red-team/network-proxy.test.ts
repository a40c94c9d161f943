// Red team, R7.16 and R7.17: --network proxy. On loopback: an HTTP service the operator named
// (`--allow-host 127.0.0.1:P1`), a TCP service nobody named (P2), a tiny npm registry named too (P3),
// and Ahma's own HTTP port. A command of a proxy-mode server reaches the named service through the
// egress proxy — plain HTTP and a CONNECT tunnel, with curl — and npm installs from the registry;
// everything else is refused: the unnamed port and Ahma's own (by the proxy, 403), a name that
// leads to loopback (`localhost`), a connect that ignores the proxy variables and UDP (by the
// kernel), and a CONNECT relayed inside an allowed tunnel (by the proxy). Run as root and as an
// ordinary user.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { confined, eachIdentity, redTeamFile } from './harness.js';

const file = redTeamFile([]);

const PACKAGE = 'ahma-proxy-fixture';
let named: HttpServer;
let unnamed: NetServer;
let registry: HttpServer;
const ports = { named: 0, unnamed: 0, registry: 0 };
/** Bytes the named service received (a relayed CONNECT must never get there). */
let namedSaw = '';
let unnamedAccepted = 0;
/** The server's arguments, filled once the ports are known (confined() reads them later). */
const args: string[] = [];

const portOf = (server: NetServer | HttpServer) => {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
};
const listen = (server: NetServer | HttpServer) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve(portOf(server))));

beforeAll(async () => {
  named = createHttpServer((request, response) =>
    response.end(`hello from ${request.url ?? ''}\n`),
  );
  named.on('connection', (socket) =>
    socket.on('data', (chunk: Buffer) => (namedSaw += chunk.toString('latin1'))),
  );
  unnamed = createServer((socket) => {
    unnamedAccepted++;
    socket.destroy();
  });
  // The registry: one package, its packument and its tarball (made with tar, as npm pack would).
  const dir = mkdtempSync(join(tmpdir(), 'ahma-registry-'));
  mkdirSync(join(dir, 'package'));
  writeFileSync(
    join(dir, 'package', 'package.json'),
    JSON.stringify({ name: PACKAGE, version: '1.0.0', main: 'index.js' }),
  );
  writeFileSync(join(dir, 'package', 'index.js'), 'module.exports = "fixture";\n');
  execFileSync('tar', ['-czf', join(dir, 'p.tgz'), '-C', dir, 'package']);
  const tarball = readFileSync(join(dir, 'p.tgz'));
  rmSync(dir, { recursive: true, force: true });
  registry = createHttpServer((request, response) => {
    const base = `http://127.0.0.1:${String(ports.registry)}`;
    if (request.url === `/${PACKAGE}`) {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          name: PACKAGE,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: PACKAGE,
              version: '1.0.0',
              main: 'index.js',
              dist: {
                tarball: `${base}/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`,
                shasum: createHash('sha1').update(tarball).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
              },
            },
          },
        }),
      );
    } else if (request.url === `/${PACKAGE}/-/${PACKAGE}-1.0.0.tgz`) {
      response.end(tarball);
    } else {
      response.statusCode = 404;
      response.end('{}');
    }
  });
  ports.named = await listen(named);
  ports.unnamed = await listen(unnamed);
  ports.registry = await listen(registry);
  args.push(
    '--network',
    'proxy',
    '--allow-host',
    `127.0.0.1:${String(ports.named)},127.0.0.1:${String(ports.registry)}`,
  );
});

afterAll(async () => {
  named.closeAllConnections();
  registry.closeAllConnections();
  for (const server of [named, unnamed, registry]) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A CONNECT to the named service through the proxy, then a CONNECT to `target` inside it. */
const RELAY = `python3 - <<'EOF'
import os, socket, base64, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["http_proxy"])
auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
s = socket.create_connection((proxy.hostname, proxy.port), 5)
s.sendall(f"CONNECT 127.0.0.1:{os.environ['NAMED']} HTTP/1.1\\r\\nProxy-Authorization: Basic {auth}\\r\\n\\r\\n".encode())
print("outer:", s.recv(200).split(b"\\r\\n")[0].decode())
s.sendall(f"CONNECT 127.0.0.1:{os.environ['TARGET']} HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n".encode())
answer = b""
try:
    while True:
        chunk = s.recv(200)
        if not chunk: break
        answer += chunk
except OSError: pass
print("inner:", (answer.split(b"\\r\\n")[0].decode() or "closed"))
EOF`;

eachIdentity('as $name', (identity) => {
  const { seat, server } = confined(file, identity, { args });

  it('R7.16: a named loopback service is reached through the proxy, by plain HTTP and by a CONNECT tunnel; an unnamed port, Ahma’s own HTTP port and localhost are refused by the proxy', async () => {
    const http = await seat().httpServer();
    try {
      const own = new URL(http.url).port;
      const named = String(ports.named);
      const result = await server().sh(
        [
          `curl -sS -m 10 http://127.0.0.1:${named}/plain`,
          `curl -sS -m 10 -p http://127.0.0.1:${named}/tunnel`,
          `echo "unnamed: $(curl -s -m 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:${String(ports.unnamed)}/)"`,
          `curl -sS -m 10 -p http://127.0.0.1:${String(ports.unnamed)}/ 2>&1 | sed 's/^/unnamed tunnel: /'`,
          `echo "own: $(curl -s -m 10 -o /dev/null -w '%{http_code}' http://127.0.0.1:${own}/mcp)"`,
          `echo "localhost: $(curl -s -m 10 -o /dev/null -w '%{http_code}' http://localhost:${named}/)"`,
        ].join('\n'),
      );
      expect(result.output).toContain('hello from /plain');
      expect(result.output).toContain('hello from /tunnel');
      expect(result.output).toContain('unnamed: 403');
      expect(result.output).toMatch(/unnamed tunnel: .*403/);
      expect(result.output).toContain('own: 403');
      expect(result.output).toContain('localhost: 403');
      expect(unnamedAccepted).toBe(0);
      // The result says what was refused and which flag would allow it.
      expect(result.output).toContain(`--allow-host 127.0.0.1:${String(ports.unnamed)}`);
    } finally {
      await http.close();
    }
  });

  it('R7.16: a connect that ignores the proxy variables and a UDP datagram fail in the kernel', async () => {
    const named = String(ports.named);
    const result = await server().sh(
      [
        `(exec 3<>/dev/tcp/127.0.0.1/${named}) 2>&1 && echo direct:reached || echo direct:refused`,
        `curl -sS -m 5 --noproxy '*' http://127.0.0.1:${named}/ 2>&1 | sed 's/^/noproxy: /'`,
        `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${named}), 2); print("py:reached")' 2>&1 | tail -1`,
        `python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", 53)); print("udp:sent")' 2>&1 | tail -1`,
      ].join('\n'),
    );
    expect(result.output).toContain('direct:refused');
    expect(result.output).toMatch(/Permission denied/);
    expect(result.output).toMatch(/noproxy: curl: \(7\)/);
    expect(result.output).not.toMatch(/reached|udp:sent|hello from/);
  });

  it('R7.17: a CONNECT relayed inside an allowed tunnel is refused, and nothing of it reaches the service', async () => {
    const before = namedSaw.length;
    const result = await server().sh(
      `NAMED=${String(ports.named)} TARGET=${String(ports.unnamed)} ${RELAY}`,
    );
    expect(result.output).toContain('outer: HTTP/1.1 200');
    expect(result.output).toMatch(/inner: (HTTP\/1\.1 403|closed)/);
    expect(namedSaw.slice(before)).not.toContain('CONNECT');
    expect(unnamedAccepted).toBe(0);
  });

  it('R7.16: npm installs a package from a registry on loopback the operator named, through the proxy', async () => {
    const result = await server().sh(
      `npm install --no-audit --no-fund --registry http://127.0.0.1:${String(ports.registry)}/ ${PACKAGE} && node -p 'require("${PACKAGE}")'`,
      { timeout_seconds: 120 },
    );
    expect(result.output).toContain('added 1 package');
    expect(result.output).toContain('fixture');
  });
});
