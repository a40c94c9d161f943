// R7.17: the egress proxy over real sockets on 127.0.0.1 (no internet): credentials first, then
// the host's rules, its addresses' ranges and the proxy's own port; CONNECT tunnels both ways
// (the server may speak first) with the relay guard inside; plain HTTP forwarded without the proxy
// credentials; refusals with X-Ahma-Refusal and a reason; every decision reported; a reset never
// crashes it, and close() ends every tunnel.
import { once } from 'node:events';
import {
  createServer as createHttpServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  startEgressProxy,
  type EgressDecision,
  type EgressProxy,
  type EgressProxyOptions,
} from '../../src/network/egress-proxy.js';
import { HostRules } from '../../src/network/host-rules.js';

const BASIC = `Basic ${Buffer.from('ahma:s3cret').toString('base64')}`;
const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Everything a socket received, and waits on it. */
class Reader {
  #data = '';
  #closed = false;
  #waiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#data += chunk.toString('latin1');
      this.#notify();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#notify();
    });
    socket.on('error', () => undefined);
  }

  get text(): string {
    return this.#data;
  }

  /** The text once it holds `part` (or the socket closed). */
  async until(part: string): Promise<string> {
    while (!this.#data.includes(part) && !this.#closed) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.#data;
  }

  /** The text once the socket closed. */
  async closed(): Promise<string> {
    while (!this.#closed) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.#data;
  }

  #notify(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }
}

interface TcpServer {
  readonly port: number;
  /** What every connection sent, together. */
  received(): string;
  /** Resolves when `count` connections have closed. */
  closedConnections(count: number): Promise<void>;
  readonly connections: Socket[];
}

/** A TCP server on 127.0.0.1 that calls `serve` for each connection and records what it got. */
async function tcpServer(serve: (socket: Socket) => void): Promise<TcpServer> {
  let received = '';
  let closed = 0;
  const waiters: (() => void)[] = [];
  const connections: Socket[] = [];
  const server = createServer((socket) => {
    connections.push(socket);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => {
      closed++;
      for (const waiter of waiters.splice(0)) waiter();
    });
    serve(socket);
  });
  await listen(server);
  cleanups.push(() => {
    for (const socket of connections) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    port: (server.address() as AddressInfo).port,
    received: () => received,
    connections,
    async closedConnections(count) {
      while (closed < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<void> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
}

const echoServer = () => tcpServer((socket) => socket.pipe(socket));
const greeter = () => tcpServer((socket) => socket.write('220 ready\r\n'));

/** A port nothing listens on (a server's, closed again). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await listen(server);
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Started {
  readonly proxy: EgressProxy;
  readonly decisions: EgressDecision<string>[];
  /** The rules in force; replace to change them while the proxy runs. */
  rules: HostRules;
}

async function startProxy(
  allow: readonly string[],
  deny: readonly string[] = [],
  more: Partial<EgressProxyOptions<string>> = {},
): Promise<Started> {
  const decisions: EgressDecision<string>[] = [];
  const started: { proxy?: EgressProxy; rules: HostRules } = { rules: new HostRules(allow, deny) };
  const proxy = await startEgressProxy<string>({
    authenticate: (user, password) =>
      user === 'ahma' && password === 's3cret' ? 'command-1' : undefined,
    rules: (principal) => {
      expect(principal).toBe('command-1');
      return started.rules;
    },
    onDecision: (decision) => decisions.push(decision),
    connectTimeoutMs: 5000,
    ...more,
  });
  cleanups.push(() => proxy.close());
  return Object.assign(started, { proxy, decisions });
}

interface ConnectAnswer {
  readonly reader: Reader;
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The length of the response head, where the tunnel's bytes start. */
  readonly headLength: number;
}

/** Sends CONNECT `target` (with the right credentials unless told otherwise) and reads the answer's head. */
async function connectThrough(
  proxy: EgressProxy,
  target: string,
  authorization: string | undefined = BASIC,
): Promise<ConnectAnswer> {
  const socket = connect(proxy.port, '127.0.0.1');
  const reader = new Reader(socket);
  await once(socket, 'connect');
  socket.setNoDelay(true);
  const auth = authorization === undefined ? '' : `Proxy-Authorization: ${authorization}\r\n`;
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  const text = await reader.until('\r\n\r\n');
  const headLength = text.indexOf('\r\n\r\n') + 4;
  const [statusLine = '', ...lines] = text.slice(0, headLength - 4).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { reader, status: Number(statusLine.split(' ')[1]), headers, headLength };
}

/** A refused CONNECT: status, X-Ahma-Refusal, the body, once the proxy closed the connection. */
async function refusedConnect(proxy: EgressProxy, target: string, authorization?: string) {
  const answer = await connectThrough(proxy, target, authorization ?? BASIC);
  const text = await answer.reader.closed();
  return {
    status: answer.status,
    refusal: answer.headers['x-ahma-refusal'],
    contentType: answer.headers['content-type'],
    headers: answer.headers,
    body: text.slice(answer.headLength),
  };
}

/** Writes into a tunnel and waits until the bytes were handed to the kernel. */
async function send(socket: Socket, data: string | Buffer): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    socket.write(data, (error) => (error ? reject(error) : resolve())),
  );
}

describe('the egress proxy: credentials', () => {
  it('R7.17: without credentials, or with wrong ones, a CONNECT is answered 407 Basic realm="ahma" and reported without a principal', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${echo.port}`]);
    const wrong = `Basic ${Buffer.from('ahma:guess').toString('base64')}`;
    for (const authorization of ['', wrong, 'Bearer s3cret', 'Basic !!!']) {
      const refused = await refusedConnect(proxy, `127.0.0.1:${echo.port}`, authorization);
      expect(refused.status, authorization).toBe(407);
      expect(refused.headers['proxy-authenticate']).toBe('Basic realm="ahma"');
      expect(refused.refusal).toBe('auth');
      expect(refused.contentType).toBe('text/plain');
      expect(refused.body).toMatch(/credentials.*\n$/);
    }
    expect(decisions).toHaveLength(4);
    expect(decisions[0]).toMatchObject({
      principal: undefined,
      method: 'CONNECT',
      host: '127.0.0.1',
      port: echo.port,
      allowed: false,
      refusal: 'auth',
    });
    expect(echo.connections).toHaveLength(0);
  });

  it('R7.17: url() carries the credentials URL-encoded', async () => {
    const { proxy } = await startProxy([]);
    expect(proxy.host).toBe('127.0.0.1');
    expect(proxy.url('ahma', 'p@ss:/word')).toBe(
      `http://ahma:p%40ss%3A%2Fword@127.0.0.1:${proxy.port}`,
    );
  });
});

describe('the egress proxy: CONNECT', () => {
  it('R7.17: a CONNECT allowed by an address rule tunnels both ways and is reported with principal, rule and address', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${echo.port}`]);
    const answer = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    expect(answer.status).toBe(200);
    expect(answer.reader.text.slice(0, answer.headLength)).toBe(
      'HTTP/1.1 200 Connection Established\r\n\r\n',
    );
    await send(answer.reader.socket, 'hello through the tunnel\n');
    expect((await answer.reader.until('tunnel\n')).slice(answer.headLength)).toBe(
      'hello through the tunnel\n',
    );
    expect(decisions).toEqual([
      {
        principal: 'command-1',
        method: 'CONNECT',
        host: '127.0.0.1',
        port: echo.port,
        allowed: true,
        rule: `127.0.0.1:${echo.port}`,
        address: '127.0.0.1',
        refusal: undefined,
        reason: expect.stringContaining(`allowed by 127.0.0.1:${echo.port}`),
      },
    ]);
  });

  it('R7.17: a server that speaks first reaches the client before it sends anything', async () => {
    const server = await greeter();
    const { proxy } = await startProxy([`127.0.0.1:${server.port}`]);
    const answer = await connectThrough(proxy, `127.0.0.1:${server.port}`);
    expect(answer.status).toBe(200);
    expect((await answer.reader.until('220 ready\r\n')).slice(answer.headLength)).toBe(
      '220 ready\r\n',
    );
  });

  it('R7.17: a destination on no rule is refused 403 unlisted, with the reason as the body', async () => {
    const echo = await echoServer();
    const other = await closedPort();
    const { proxy, decisions } = await startProxy(['example.com', `127.0.0.2:${echo.port}`]);
    const refused = await refusedConnect(proxy, `127.0.0.1:${other}`);
    expect(refused).toMatchObject({
      status: 403,
      refusal: 'unlisted',
      contentType: 'text/plain',
      body: `127.0.0.1:${other} is not on the allowlist\n`,
    });
    expect(decisions.at(-1)).toMatchObject({
      principal: 'command-1',
      allowed: false,
      refusal: 'unlisted',
      rule: undefined,
      reason: `127.0.0.1:${other} is not on the allowlist`,
    });
  });

  it('R7.17: a port the host’s rule does not list is refused 403 port, naming the rule and its ports', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${echo.port}`, 'example.com']);
    const refused = await refusedConnect(proxy, 'example.com:22');
    expect(refused).toMatchObject({
      status: 403,
      refusal: 'port',
      body: 'example.com:22 is refused: port 22 is not allowed by example.com (80, 443)\n',
    });
    expect(decisions.at(-1)).toMatchObject({ host: 'example.com', port: 22, refusal: 'port' });
  });

  it('R7.17: deny wins over allow, for the host and for the address a name resolves to', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy(
      [`127.0.0.1:${echo.port}`, `good.test:${echo.port}`],
      ['127.0.0.1'],
      { resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
    );
    const literal = await refusedConnect(proxy, `127.0.0.1:${echo.port}`);
    expect(literal).toMatchObject({
      status: 403,
      refusal: 'denied',
      body: `127.0.0.1:${echo.port} is denied by 127.0.0.1\n`,
    });
    expect(decisions.at(-1)).toMatchObject({ refusal: 'denied', rule: '127.0.0.1' });
    const named = await refusedConnect(proxy, `good.test:${echo.port}`);
    expect(named).toMatchObject({ status: 403, refusal: 'denied' });
    expect(named.body).toBe('good.test resolves to 127.0.0.1, which is denied by 127.0.0.1\n');
    expect(echo.connections).toHaveLength(0);
  });

  it('R7.17: localhost allowed by name is refused 403 private: it resolves to loopback, which only a rule naming the address reaches', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`localhost:${echo.port}`]);
    const refused = await refusedConnect(proxy, `localhost:${echo.port}`);
    expect(refused.status).toBe(403);
    expect(refused.refusal).toBe('private');
    expect(refused.body).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1) \(loopback\), which only a rule naming the address allows \(--allow-host (127\.0\.0\.1|\[::1\]):\d+\)\n$/,
    );
    expect(decisions.at(-1)).toMatchObject({
      host: 'localhost',
      allowed: false,
      refusal: 'private',
      rule: `localhost:${echo.port}`,
      address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/),
    });
    expect(echo.connections).toHaveLength(0);
  });

  it('R7.17: a name resolving to loopback is refused private while the rule naming the address allows the literal; naming the address lets the name through too', async () => {
    const echo = await echoServer();
    const resolved: string[] = [];
    const started = await startProxy([`good.test:${echo.port}`], [], {
      resolve: async (host) => {
        resolved.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const named = await refusedConnect(started.proxy, `good.test:${echo.port}`);
    expect(named).toMatchObject({ status: 403, refusal: 'private' });
    expect(named.body).toBe(
      `good.test resolves to 127.0.0.1 (loopback), which only a rule naming the address allows (--allow-host 127.0.0.1:${echo.port})\n`,
    );
    expect(resolved).toEqual(['good.test']);

    started.rules = started.rules.with([`127.0.0.1:${echo.port}`]);
    const literal = await connectThrough(started.proxy, `127.0.0.1:${echo.port}`);
    expect(literal.status).toBe(200);
    // An IP literal is never resolved.
    expect(resolved).toEqual(['good.test']);
    const through = await connectThrough(started.proxy, `GOOD.test.:${echo.port}`);
    expect(through.status).toBe(200);
    await send(through.reader.socket, 'ping\n');
    expect((await through.reader.until('ping\n')).slice(through.headLength)).toBe('ping\n');
    expect(started.decisions.at(-1)).toMatchObject({
      host: 'good.test',
      allowed: true,
      rule: `good.test:${echo.port}`,
      address: '127.0.0.1',
      reason: expect.stringContaining(`loopback allowed by 127.0.0.1:${echo.port}`),
    });
  });

  it('R7.17: a name is resolved once and the checked address is the one connected to (no second lookup to rebind)', async () => {
    const echo = await echoServer();
    let lookups = 0;
    const { proxy, decisions } = await startProxy(
      [`rebind.test:${echo.port}`, `127.0.0.1:${echo.port}`],
      [],
      {
        resolve: async () => {
          lookups++;
          // The first answer is checked; a second (were there one) would point elsewhere.
          return lookups === 1
            ? [{ address: '127.0.0.1', family: 4 }]
            : [{ address: '169.254.169.254', family: 4 }];
        },
      },
    );
    const answer = await connectThrough(proxy, `rebind.test:${echo.port}`);
    expect(answer.status).toBe(200);
    await send(answer.reader.socket, 'x\n');
    await answer.reader.until('x\n');
    expect(lookups).toBe(1);
    expect(echo.connections).toHaveLength(1);
    expect(decisions.at(-1)).toMatchObject({ allowed: true, address: '127.0.0.1' });
  });

  it('R7.17: special addresses among a name’s addresses are skipped; the first one allowed is connected to', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy(
      [`mixed.test:${echo.port}`, `127.0.0.1:${echo.port}`],
      [],
      {
        resolve: async () => [
          { address: '169.254.169.254', family: 4 },
          { address: '::ffff:10.0.0.1', family: 6 },
          { address: '127.0.0.1', family: 4 },
        ],
      },
    );
    const answer = await connectThrough(proxy, `mixed.test:${echo.port}`);
    expect(answer.status).toBe(200);
    expect(decisions.at(-1)).toMatchObject({ allowed: true, address: '127.0.0.1' });
    const metadata = await startProxy([`meta.test:${echo.port}`], [], {
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    const refused = await refusedConnect(metadata.proxy, `meta.test:${echo.port}`);
    expect(refused.refusal).toBe('private');
    expect(refused.body).toMatch(/169\.254\.169\.254 \(cloud metadata\)/);
  });

  it('R7.17: a malformed target is refused 400 malformed, an IPv4 address written as a number among them', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${echo.port}`]);
    for (const target of ['127.1', '2130706433', '0x7f.0.0.1']) {
      const refused = await refusedConnect(proxy, `${target}:${echo.port}`);
      expect(refused, target).toMatchObject({ status: 400, refusal: 'malformed' });
      expect(refused.body).toMatch(/is not a host the proxy accepts/);
    }
    expect((await refusedConnect(proxy, 'no-port-here')).refusal).toBe('malformed');
    expect(decisions.every((decision) => decision.refusal === 'malformed')).toBe(true);
    expect(decisions[0]).toMatchObject({ host: '127.1', port: echo.port });
    expect(echo.connections).toHaveLength(0);
  });

  it('R7.17: a name that does not resolve is 502 unresolved; a refused connection 502 upstream', async () => {
    const port = await closedPort();
    const { proxy, decisions } = await startProxy(
      [`nowhere.test:${port}`, `127.0.0.1:${port}`],
      [],
      {
        resolve: async () => {
          throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
        },
      },
    );
    expect(await refusedConnect(proxy, `nowhere.test:${port}`)).toMatchObject({
      status: 502,
      refusal: 'unresolved',
      body: 'nowhere.test does not resolve (ENOTFOUND)\n',
    });
    const upstream = await refusedConnect(proxy, `127.0.0.1:${port}`);
    expect(upstream).toMatchObject({ status: 502, refusal: 'upstream' });
    expect(upstream.body).toMatch(
      /could not connect to 127\.0\.0\.1:\d+ \(127\.0\.0\.1\): ECONNREFUSED/,
    );
    expect(decisions.map((decision) => decision.refusal)).toEqual(['unresolved', 'upstream']);
  });

  it('R7.17: the proxy’s own port is refused 403 loop, even when a rule names it', async () => {
    const started = await startProxy([]);
    const own = started.proxy.port;
    started.rules = new HostRules([`127.0.0.1:${own}`, `[::1]:${own}`, `self.test:${own}`]);
    for (const target of [`127.0.0.1:${own}`, `[::1]:${own}`, `[::ffff:127.0.0.1]:${own}`]) {
      const refused = await refusedConnect(started.proxy, target);
      expect(refused.status, target).toBe(403);
      expect(refused.refusal, target).toBe('loop');
    }
    expect(started.decisions[0]).toMatchObject({ refusal: 'loop', allowed: false });
    expect(started.decisions[0]?.reason).toMatch(/is the egress proxy itself/);
  });

  it('R7.17: onDecision throwing does not break the proxy', async () => {
    const echo = await echoServer();
    const { proxy } = await startProxy([`127.0.0.1:${echo.port}`], [], {
      onDecision: () => {
        throw new Error('the audit log is full');
      },
    });
    expect((await connectThrough(proxy, `127.0.0.1:${echo.port}`)).status).toBe(200);
    expect((await refusedConnect(proxy, '127.0.0.1:1')).status).toBe(403);
  });
});

describe('the egress proxy: the relay guard', () => {
  const inner = 'CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n';

  /** An allowed tunnel to an echo server, then `write` inside it; what came back, and what the echo server got. */
  async function relayed(write: (socket: Socket, answer: ConnectAnswer) => Promise<void>) {
    const echo = await echoServer();
    const started = await startProxy([`127.0.0.1:${echo.port}`]);
    const answer = await connectThrough(started.proxy, `127.0.0.1:${echo.port}`);
    expect(answer.status).toBe(200);
    await write(answer.reader.socket, answer);
    const text = await answer.reader.closed();
    await echo.closedConnections(1);
    return { echo, decisions: started.decisions, inside: text.slice(answer.headLength) };
  }

  /** The refusal came into the tunnel (after what the upstream `echoed` before it) and was reported. */
  function expectRelayRefused(result: Awaited<ReturnType<typeof relayed>>, echoed = '') {
    expect(result.inside.startsWith(`${echoed}HTTP/1.1 403 Forbidden\r\n`)).toBe(true);
    expect(result.inside).toMatch(/\r\nX-Ahma-Refusal: relay\r\n/);
    expect(result.inside).toContain(
      `a CONNECT to 127.0.0.1:9 inside the tunnel to 127.0.0.1:${result.echo.port} (a relay) was refused\n`,
    );
    expect(result.decisions).toHaveLength(2);
    expect(result.decisions[0]).toMatchObject({ allowed: true });
    expect(result.decisions[1]).toMatchObject({
      principal: 'command-1',
      method: 'CONNECT',
      host: '127.0.0.1',
      port: result.echo.port,
      allowed: false,
      refusal: 'relay',
      rule: `127.0.0.1:${result.echo.port}`,
      address: '127.0.0.1',
    });
  }

  it('R7.17: a CONNECT sent inside an allowed tunnel is answered 403 in the tunnel and never reaches the upstream', async () => {
    const result = await relayed((socket) => send(socket, inner));
    expectRelayRefused(result);
    expect(result.echo.received()).toBe('');
  });

  it('R7.17: the same, split across two writes', async () => {
    const result = await relayed(async (socket) => {
      await send(socket, inner.slice(0, 4));
      await send(socket, inner.slice(4));
    });
    expectRelayRefused(result);
    expect(result.echo.received()).toBe('');
  });

  it('R7.17: the same after an innocent request: in one write nothing reaches the upstream; written after it, only the innocent request does', async () => {
    const innocent = 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const together = await relayed((socket) => send(socket, `${innocent}${inner}`));
    expectRelayRefused(together);
    expect(together.echo.received()).toBe('');

    const after = await relayed(async (socket, answer) => {
      await send(socket, innocent);
      await answer.reader.until(innocent);
      await send(socket, inner);
    });
    expectRelayRefused(after, innocent);
    expect(after.echo.received()).toBe(innocent);
  });

  it('R7.17: an absolute-form request inside a tunnel is refused as a relay', async () => {
    const result = await relayed((socket) =>
      send(socket, 'GET http://169.254.169.254/latest/ HTTP/1.1\r\nHost: x\r\n\r\n'),
    );
    expect(result.inside).toContain('a GET for http://169.254.169.254/latest/ inside the tunnel');
    expect(result.decisions.at(-1)).toMatchObject({ refusal: 'relay' });
    expect(result.echo.received()).toBe('');
  });

  it('R7.17: a stream opening with a TLS record passes untouched', async () => {
    const echo = await echoServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${echo.port}`]);
    const answer = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    const record = Buffer.concat([
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05]),
      Buffer.from(`\r\n${inner}`),
    ]);
    await send(answer.reader.socket, record);
    const text = await answer.reader.until(inner);
    expect(Buffer.from(text.slice(answer.headLength), 'latin1').equals(record)).toBe(true);
    expect(decisions).toHaveLength(1);
  });
});

/** A local HTTP server that answers with what it got. */
async function httpServer() {
  const seen: { url: string | undefined; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ url: req.url, headers: req.headers, body });
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Served': 'yes' });
      res.end(`served ${req.method} ${req.url} ${body}`);
    });
  });
  await listen(server);
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, seen };
}

/** One request to the proxy; its answer as status, headers and body. */
async function viaProxy(
  proxy: EgressProxy,
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  const req = request({
    host: '127.0.0.1',
    port: proxy.port,
    method: options.method ?? 'GET',
    path,
    agent: false,
    headers: { 'Proxy-Authorization': BASIC, 'Proxy-Connection': 'keep-alive', ...options.headers },
  });
  req.end(options.body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of res) body += (chunk as Buffer).toString();
  return { status: res.statusCode, headers: res.headers, body };
}

describe('the egress proxy: plain HTTP', () => {
  it('R7.17: an absolute-form GET reaches the allowed server with its Host and path, without the proxy credentials', async () => {
    const server = await httpServer();
    const { proxy, decisions } = await startProxy([`127.0.0.1:${server.port}`]);
    const answer = await viaProxy(proxy, `http://127.0.0.1:${server.port}/hello?x=1`, {
      headers: { 'X-Kept': 'yes', Connection: 'X-Dropped', 'X-Dropped': 'no' },
    });
    expect(answer).toMatchObject({
      status: 200,
      body: 'served GET /hello?x=1 ',
      headers: { 'x-served': 'yes' },
    });
    expect(server.seen[0]?.url).toBe('/hello?x=1');
    expect(server.seen[0]?.headers).toMatchObject({
      host: `127.0.0.1:${server.port}`,
      'x-kept': 'yes',
    });
    for (const header of ['proxy-authorization', 'proxy-connection', 'x-dropped']) {
      expect(server.seen[0]?.headers[header], header).toBeUndefined();
    }
    expect(decisions).toEqual([
      expect.objectContaining({
        principal: 'command-1',
        method: 'GET',
        host: '127.0.0.1',
        port: server.port,
        allowed: true,
        address: '127.0.0.1',
      }),
    ]);
  });

  it('R7.17: a request body streams to the server', async () => {
    const server = await httpServer();
    const { proxy } = await startProxy([`127.0.0.1:${server.port}`]);
    const answer = await viaProxy(proxy, `http://127.0.0.1:${server.port}/upload`, {
      method: 'POST',
      body: 'a body',
    });
    expect(answer.body).toBe('served POST /upload a body');
  });

  it('R7.17: plain HTTP is decided like CONNECT: credentials, rules, special ranges', async () => {
    const server = await httpServer();
    const { proxy, decisions } = await startProxy([`named.test:${server.port}`], [], {
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const noAuth = await viaProxy(proxy, `http://127.0.0.1:${server.port}/`, {
      headers: { 'Proxy-Authorization': '' },
    });
    expect(noAuth).toMatchObject({
      status: 407,
      headers: { 'proxy-authenticate': 'Basic realm="ahma"', 'x-ahma-refusal': 'auth' },
    });
    const unlisted = await viaProxy(proxy, `http://127.0.0.1:${server.port}/`);
    expect(unlisted).toMatchObject({
      status: 403,
      headers: { 'x-ahma-refusal': 'unlisted', 'content-type': 'text/plain' },
      body: `127.0.0.1:${server.port} is not on the allowlist\n`,
    });
    const named = await viaProxy(proxy, `http://named.test:${server.port}/`);
    expect(named).toMatchObject({ status: 403, headers: { 'x-ahma-refusal': 'private' } });
    expect(server.seen).toHaveLength(0);
    expect(decisions.map((decision) => decision.refusal)).toEqual(['auth', 'unlisted', 'private']);
  });

  it('R7.17: an origin-form or https:// request is refused 400, saying how to use the proxy', async () => {
    const { proxy, decisions } = await startProxy([]);
    const origin = await viaProxy(proxy, '/index.html');
    expect(origin).toMatchObject({ status: 400, headers: { 'x-ahma-refusal': 'malformed' } });
    expect(origin.body).toMatch(/absolute http:\/\/ URL/);
    const https = await viaProxy(proxy, 'https://example.com/');
    expect(https).toMatchObject({ status: 400, headers: { 'x-ahma-refusal': 'malformed' } });
    expect(https.body).toMatch(/for https:\/\/ use CONNECT/);
    expect(decisions.map((decision) => decision.refusal)).toEqual(['malformed', 'malformed']);
  });

  it('R7.17: a server that fails before answering gives 502 upstream', async () => {
    const broken = await tcpServer((socket) => socket.on('data', () => socket.resetAndDestroy()));
    const { proxy } = await startProxy([`127.0.0.1:${broken.port}`]);
    const answer = await viaProxy(proxy, `http://127.0.0.1:${broken.port}/`);
    expect(answer).toMatchObject({ status: 502, headers: { 'x-ahma-refusal': 'upstream' } });
  });
});

describe('the egress proxy: resets and close', () => {
  it('R7.17: a client or server resetting a tunnel does not crash the proxy, which goes on serving', async () => {
    const echo = await echoServer();
    const { proxy } = await startProxy([`127.0.0.1:${echo.port}`]);
    const first = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    await send(first.reader.socket, 'x\n');
    await first.reader.until('x\n');
    first.reader.socket.resetAndDestroy();
    await echo.closedConnections(1);

    const second = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    await send(second.reader.socket, 'y\n');
    await second.reader.until('y\n');
    echo.connections[1]?.resetAndDestroy();
    await second.reader.closed();

    // Reset while the proxy is still deciding (before the 200).
    const early = connect(proxy.port, '127.0.0.1');
    early.on('error', () => undefined);
    await once(early, 'connect');
    early.write(`CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nProxy-Authorization: ${BASIC}\r\n\r\n`);
    early.resetAndDestroy();

    const third = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    await send(third.reader.socket, 'z\n');
    expect((await third.reader.until('z\n')).slice(third.headLength)).toBe('z\n');
  });

  it('R7.17: close() ends every open tunnel and stops listening', async () => {
    const echo = await echoServer();
    const { proxy } = await startProxy([`127.0.0.1:${echo.port}`]);
    const tunnel = await connectThrough(proxy, `127.0.0.1:${echo.port}`);
    expect(tunnel.status).toBe(200);
    const idle = connect(proxy.port, '127.0.0.1');
    const idleReader = new Reader(idle);
    await once(idle, 'connect');
    await proxy.close();
    await tunnel.reader.closed();
    await idleReader.closed();
    await echo.closedConnections(1);
    const refused = connect(proxy.port, '127.0.0.1');
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
  });
});
