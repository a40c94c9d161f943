// SPEC §6 security of the HTTP server: loopback by default; a request whose Host or Origin is not
// local (a loopback name or address with the bound port) gets 403 before anything else (DNS
// rebinding); off loopback a bearer token is required to start, and then every request must carry
// it (401 otherwise); bodies over the limit get 413; the token never reaches the log. Raw requests
// over node:http (their Host sent as given) against the server in the test process.
import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { checkRequest, isLoopback } from '../../../src/transports/http/guard.js';
import { startHttpServer } from '../../../src/transports/http/server.js';
import { E2E, readLog, textOf } from '../../support/harness.js';
import { httpClient, httpServer, INITIALIZE, post, rawRequest } from '../../support/http.js';

const e2e = new E2E();
afterEach(() => e2e.cleanup());

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };
const INIT_BODY = JSON.stringify(INITIALIZE);
const TOKEN = 'e2e-token-7f3a9c21d4b8e6f0';

describe('DNS rebinding: Host and Origin', () => {
  it('SPEC §6 security: a Host other than a loopback name or address with the bound port gets 403', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const port = String(http.port);
    for (const host of [
      'evil.example.com',
      `evil.example.com:${port}`,
      'localhost:1',
      '127.0.0.1',
      `10.0.0.1:${port}`,
    ]) {
      const answer = await rawRequest(http.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, host },
        body: INIT_BODY,
      });
      expect(answer.status, host).toBe(403);
      expect(answer.headers['content-type'], host).toBe('application/json');
    }
    expect(http.server.sessions.size).toBe(0);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const answer = await rawRequest(http.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, host },
        body: INIT_BODY,
      });
      expect(answer.status, host).toBe(200);
    }
  });

  it('SPEC §6 security: an Origin that is not a loopback origin with the bound port gets 403; none at all passes', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const port = String(http.port);
    for (const origin of [
      'http://evil.example.com',
      'null',
      `http://evil.example.com:${port}`,
      'http://localhost:1',
      'file://',
    ]) {
      const answer = await rawRequest(http.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, origin },
        body: INIT_BODY,
      });
      expect(answer.status, origin).toBe(403);
    }
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const answer = await rawRequest(http.url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, origin },
        body: INIT_BODY,
      });
      expect(answer.status, origin).toBe(200);
    }
  });

  it('SPEC §6 security: the guard covers every path and method (GET /sse, DELETE, unknown paths)', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const host = 'rebound.example.com';
    for (const [method, path] of [
      ['GET', '/sse'],
      ['POST', '/sse'],
      ['DELETE', '/mcp'],
      ['GET', '/mcp'],
      ['GET', '/elsewhere'],
    ] as const) {
      const answer = await rawRequest(new URL(path, http.url).href, { method, headers: { host } });
      expect(answer.status, `${method} ${path}`).toBe(403);
    }
  });

  it('SPEC §6 security: loopback names and addresses are told apart from the rest', () => {
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', 'app.localhost']) {
      expect(isLoopback(host), host).toBe(true);
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      'example.com',
      'localhost.example.com',
      '128.0.0.1',
    ]) {
      expect(isLoopback(host), host).toBe(false);
    }
    // No Host at all (HTTP/1.0) is not local either.
    expect(checkRequest({}, { bindHost: '127.0.0.1', port: 3000, token: undefined })).toMatchObject(
      {
        status: 403,
      },
    );
    const policy = { bindHost: '0.0.0.0', port: 3000, token: TOKEN };
    const auth = { authorization: `Bearer ${TOKEN}` };
    // Off loopback, a remote client names the machine as it knows it, and its page's own origin.
    expect(checkRequest({ host: '192.168.1.5:3000', ...auth }, policy)).toBeUndefined();
    expect(
      checkRequest(
        { host: '192.168.1.5:3000', origin: 'http://192.168.1.5:3000', ...auth },
        policy,
      ),
    ).toBeUndefined();
    expect(
      checkRequest(
        { host: '192.168.1.5:3000', origin: 'http://evil.example.com', ...auth },
        policy,
      ),
    ).toMatchObject({ status: 403 });
    expect(checkRequest({ host: '192.168.1.5:3001', ...auth }, policy)).toMatchObject({
      status: 403,
    });
    // Bound to one address: that address, or loopback.
    const bound = { ...policy, bindHost: '192.168.1.5' };
    expect(checkRequest({ host: '192.168.1.5:3000', ...auth }, bound)).toBeUndefined();
    expect(checkRequest({ host: 'other.example.com:3000', ...auth }, bound)).toMatchObject({
      status: 403,
    });
  });
});

describe('bearer token', () => {
  it('SPEC §6 security: a server off loopback refuses to start without a token', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    await expect(
      startHttpServer(http.runtime, { host: '0.0.0.0', port: 0, token: undefined }),
    ).rejects.toThrow(/reachable from other machines.*--http-token-file/);
  });

  it('SPEC §6 security: with a token every request must carry it (401 otherwise), checked before any session opens', async () => {
    const scope = await e2e.scope();
    const http = await httpServer(e2e, scope, ['--log-to-stderr', '--debug'], {
      host: '0.0.0.0',
      token: TOKEN,
    });
    const url = `http://127.0.0.1:${String(http.port)}/mcp`;
    for (const authorization of [
      undefined,
      'Bearer wrong-token',
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      'Bearer ',
    ]) {
      const headers: Record<string, string> = { ...JSON_HEADERS };
      if (authorization !== undefined) headers['authorization'] = authorization;
      const answer = await rawRequest(url, { method: 'POST', headers, body: INIT_BODY });
      expect(answer.status, String(authorization)).toBe(401);
      expect(answer.headers['www-authenticate'], String(authorization)).toBe('Bearer');
    }
    const legacy = await rawRequest(`http://127.0.0.1:${String(http.port)}/sse`);
    expect(legacy.status).toBe(401);
    expect(http.server.sessions.size).toBe(0);

    const client = await httpClient(e2e, url, http, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(textOf(await client.call('e2e_sync', { value: 'authorized' }))).toContain('authorized');
    // The token is in no log line and no echo.
    expect(http.stderr()).toContain('→ STDIN:');
    expect(http.stderr()).not.toContain(TOKEN);
    const log = await readLog(scope);
    expect(log.text).not.toContain(TOKEN);
  });

  it('SPEC §6 security: the token is compared whole (a prefix or a longer word is refused)', () => {
    const policy = { bindHost: '127.0.0.1', port: 3000, token: TOKEN };
    const host = '127.0.0.1:3000';
    expect(checkRequest({ host, authorization: `Bearer ${TOKEN}` }, policy)).toBeUndefined();
    expect(checkRequest({ host, authorization: `bearer ${TOKEN}` }, policy)).toBeUndefined();
    for (const given of [TOKEN.slice(0, -1), `${TOKEN}0`, '', TOKEN.toUpperCase()]) {
      expect(checkRequest({ host, authorization: `Bearer ${given}` }, policy), given).toMatchObject(
        {
          status: 401,
        },
      );
    }
  });
});

describe('request bodies', () => {
  it('SPEC §6 security: a body over 4 MiB gets 413, and the server goes on', async () => {
    const http = await httpServer(e2e, await e2e.scope());
    const padding = 'x'.repeat(4 * 1024 * 1024);
    const big = JSON.stringify({ ...INITIALIZE, params: { ...INITIALIZE.params, padding } });
    const answer = await rawRequest(http.url, { method: 'POST', headers: JSON_HEADERS, body: big });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { message: expect.stringContaining('too large') },
    });
    expect(http.server.sessions.size).toBe(0);
    const small = await post(http.url, INITIALIZE);
    expect(small.status).toBe(200);
  });

  it('SPEC §6 security: the limit holds without Content-Length (a chunked body) and on a legacy POST', async () => {
    const http = await httpServer(e2e, await e2e.scope(), [], { maxBodyBytes: 1024 });
    const chunked = await fetch(http.url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: new Blob(['x'.repeat(4096)]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    // A legacy session's POST.
    const controller = new AbortController();
    const stream = await fetch(new URL('/sse', http.url), { signal: controller.signal });
    const reader = stream.body?.pipeThrough(new TextDecoderStream()).getReader();
    const endpoint = /data: (\S+)/.exec((await reader?.read())?.value ?? '')?.[1] ?? '';
    const legacyPost = await post(new URL(endpoint, http.url).href, { padding: 'x'.repeat(4096) });
    expect(legacyPost.status).toBe(413);
    controller.abort();
  });
});

describe('the log', () => {
  it('SPEC §6 security: at debug level the log file holds the token of neither a refused nor a served request', async () => {
    const scope = await e2e.scope();
    // The log file of an in-process server with a token: requests refused and served.
    const http = await httpServer(e2e, scope, ['--debug'], { token: TOKEN });
    await rawRequest(http.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, authorization: 'Bearer nope' },
      body: INIT_BODY,
    });
    await rawRequest(http.url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: INIT_BODY,
    });
    const files = (await readLog(scope)).files;
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      expect(await readFile(`${scope.logDir}/${file}`, 'utf8')).not.toContain(TOKEN);
    }
  });
});
