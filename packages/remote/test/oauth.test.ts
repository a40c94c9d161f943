// R14 against a real authorization server (oidc-provider) protecting a real MCP server: the SDK's
// client auth driven by Ahma's provider, the token file, the localhost callback; the test plays the
// browser (follows the authorization URL, signs in, consents).
import { execFileSync } from 'node:child_process';
import { chmod, chown, lstat, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AhmaOAuthProvider,
  CallbackListener,
  TokenStore,
  connectHttp,
  defaultTokenPath,
  serverKey,
  type HttpConnection,
} from '../src/index.js';
import {
  createBrowser,
  freePort,
  startOAuthWorld,
  type OAuthWorld,
} from './support/oauth-world.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function world(options: Parameters<typeof startOAuthWorld>[0] = {}): Promise<OAuthWorld> {
  const started = await startOAuthWorld(options);
  cleanups.push(() => started.close());
  return started;
}

async function tokenPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ahma-oauth-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'mcp_http_token.json');
}

/** Connects like ahma-list-tools does; `browse` plays the user on each authorization URL. */
async function connect(
  target: OAuthWorld,
  path: string,
  port: number,
  browse: (url: URL) => Promise<unknown> = (url) => createBrowser().authorize(url.href),
): Promise<HttpConnection & { urls: URL[] }> {
  const urls: URL[] = [];
  const connection = await connectHttp(() => new Client({ name: 'oauth-test', version: '1.0.0' }), {
    url: target.mcpUrl,
    store: new TokenStore(path),
    callbackPort: port,
    authorizationTimeoutMs: 15_000,
    onAuthorizationUrl: (url) => {
      urls.push(url);
      void browse(url);
    },
  });
  cleanups.push(() => connection.client.close());
  return { ...connection, urls };
}

const echo = async (connection: HttpConnection, text: string) =>
  (await connection.client.callTool({ name: 'echo', arguments: { text } })).content;

// Short-lived access tokens are 2 s, not 1: a JWT's iat and exp are whole seconds, so a token
// issued late in a second may have well under its lifetime left.
describe('OAuth 2.1 + PKCE with the SDK and a real authorization server', () => {
  it('R14: the first connection logs in (discovery, dynamic registration, PKCE, the callback), and every call then carries the token', async () => {
    const remote = await world();
    const path = await tokenPath();
    const connection = await connect(remote, path, await freePort());
    expect(connection.loggedIn).toBe(true);
    expect(connection.urls).toHaveLength(1);
    const [url] = connection.urls;
    expect(url?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url?.searchParams.get('resource')).toBe(remote.mcpUrl.href);
    expect(await echo(connection, 'hello')).toEqual([{ type: 'text', text: 'hello' }]);
    expect(remote.events).toContain('registration_create.success');
    const kept = JSON.parse(await readFile(path, 'utf8')) as {
      servers: Record<string, { tokens?: { access_token?: string; refresh_token?: string } }>;
    };
    const entry = kept.servers[serverKey(remote.mcpUrl)];
    expect(entry?.tokens?.access_token).toMatch(/^ey/);
    expect(entry?.tokens?.refresh_token).toBeDefined();
  });

  it("R11.1: the token file is mode 0600, and the default path is the temp directory's mcp_http_token.json unless AHMA_HTTP_CLIENT_TOKEN_PATH says otherwise", async () => {
    const remote = await world();
    const path = await tokenPath();
    await connect(remote, path, await freePort());
    expect((await lstat(path)).mode & 0o777).toBe(0o600);
    expect(defaultTokenPath({})).toBe(join(tmpdir(), 'mcp_http_token.json'));
    expect(defaultTokenPath({ AHMA_HTTP_CLIENT_TOKEN_PATH: '/x/tokens.json' })).toBe(
      '/x/tokens.json',
    );
  });

  it('R14.6: a second run reuses the stored tokens: no browser, no new registration', async () => {
    const remote = await world();
    const path = await tokenPath();
    await connect(remote, path, await freePort());
    // Port 1 cannot be bound here: a login attempt would fail instead of going unnoticed.
    const again = await connect(remote, path, 1);
    expect(again.loggedIn).toBe(false);
    expect(again.urls).toEqual([]);
    expect(await echo(again, 'reused')).toEqual([{ type: 'text', text: 'reused' }]);
    expect(remote.events.filter((e) => e === 'registration_create.success')).toHaveLength(1);
  });

  it('R14: an expired access token is refreshed with the refresh token, without the user', async () => {
    const remote = await world({ accessTokenSeconds: 2 });
    const path = await tokenPath();
    const connection = await connect(remote, path, await freePort());
    const before = JSON.parse(await readFile(path, 'utf8')) as object;
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect(await echo(connection, 'after expiry')).toEqual([
      { type: 'text', text: 'after expiry' },
    ]);
    expect(connection.urls).toHaveLength(1); // the first login only
    expect(remote.unauthorized).toBeGreaterThan(0); // the expired token was refused once
    expect(JSON.parse(await readFile(path, 'utf8'))).not.toEqual(before); // new tokens kept
  });

  it('R14: a stored access token known to have expired is refreshed before it is sent', async () => {
    const remote = await world({ accessTokenSeconds: 2 });
    const path = await tokenPath();
    const port = await freePort();
    const first = await connect(remote, path, port);
    await first.client.close();
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const refusedBefore = remote.unauthorized;
    const second = await connect(remote, path, port);
    expect(second.loggedIn).toBe(false);
    expect(second.urls).toEqual([]);
    expect(remote.unauthorized).toBe(refusedBefore); // no request went out with the old token
    expect(await echo(second, 'fresh')).toEqual([{ type: 'text', text: 'fresh' }]);
  });

  it('R14: when the refresh token was revoked, the next connection logs in again', async () => {
    const remote = await world({ accessTokenSeconds: 2 });
    const path = await tokenPath();
    const first = await connect(remote, path, await freePort());
    const { tokens, client } = await new TokenStore(path).get(remote.mcpUrl);
    await remote.revoke(tokens?.refresh_token ?? '', client?.client_id ?? '', 'refresh_token');
    await first.client.close();
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const second = await connect(remote, path, await freePort());
    expect(second.loggedIn).toBe(true);
    expect(second.urls).toHaveLength(1);
    expect(remote.events).toContain('grant.error: invalid_grant');
    expect(await echo(second, 'back')).toEqual([{ type: 'text', text: 'back' }]);
  });

  it('R14.5: a callback with a forged state is refused and the login goes on; the real one completes it', async () => {
    const remote = await world();
    const path = await tokenPath();
    const port = await freePort();
    const forged: { status: number; body: string }[] = [];
    const connection = await connect(remote, path, port, async (url) => {
      const browser = createBrowser();
      // The attacker's callback first: the same code, another state.
      await browser.authorize(url.href, (next) => {
        const hop = new URL(next);
        if (hop.port === String(port) && hop.searchParams.has('code')) {
          void fetch(
            `${hop.origin}${hop.pathname}?code=${hop.searchParams.get('code') ?? ''}&state=forged`,
          ).then(async (response) =>
            forged.push({ status: response.status, body: await response.text() }),
          );
        }
        return next;
      });
    });
    expect(connection.loggedIn).toBe(true);
    // The forged callback's answer may come after the login completed.
    await vi.waitFor(() => {
      expect(forged).toEqual([
        { status: 400, body: expect.stringContaining('unknown state') as string },
      ]);
    });
  });

  it('R14: the authorization server refuses a code exchanged with the wrong PKCE verifier', async () => {
    const remote = await world();
    const path = await tokenPath();
    const port = await freePort();
    let authorizationUrl: URL | undefined;
    const provider = new AhmaOAuthProvider({
      server: remote.mcpUrl,
      store: new TokenStore(path),
      callbackPort: port,
      authorizationTimeoutMs: 15_000,
      onAuthorizationUrl: (url) => {
        authorizationUrl = url;
      },
    });
    cleanups.push(() => provider.close());
    expect(await auth(provider, { serverUrl: remote.mcpUrl })).toBe('REDIRECT');
    void createBrowser().authorize(authorizationUrl?.href ?? '');
    const code = await provider.authorizationCode();
    provider.saveCodeVerifier('x'.repeat(64)); // not the verifier the challenge was made from
    await expect(
      auth(provider, { serverUrl: remote.mcpUrl, authorizationCode: code }),
    ).rejects.toThrow(/invalid/i);
    expect(remote.events).toContain('grant.error: invalid_grant');
    expect((await new TokenStore(path).get(remote.mcpUrl)).tokens).toBeUndefined();
  });
});

describe('the token file', () => {
  const server = new URL('https://mcp.example.com/mcp?session=1');

  it('R11.1: entries are kept per server and forgotten one by one', async () => {
    const store = new TokenStore(await tokenPath());
    const other = new URL('https://other.example.com/mcp');
    await store.update(server, () => ({ tokens: { access_token: 'a', token_type: 'Bearer' } }));
    await store.update(other, () => ({ tokens: { access_token: 'b', token_type: 'Bearer' } }));
    expect((await store.get(new URL('https://mcp.example.com/mcp'))).tokens?.access_token).toBe(
      'a',
    );
    expect(await store.forget(server)).toBe(true);
    expect(await store.forget(server)).toBe(false);
    expect((await store.get(other)).tokens?.access_token).toBe('b');
  });

  it('R14: a refresh refused here does not erase the newer tokens another process saved meanwhile', async () => {
    const path = await tokenPath();
    const mine = new TokenStore(path);
    const provider = new AhmaOAuthProvider({
      server,
      store: mine,
      callbackPort: 1,
      authorizationTimeoutMs: 1000,
      onAuthorizationUrl: () => undefined,
    });
    const old = { access_token: 'a1', token_type: 'Bearer', refresh_token: 'r1' };
    await mine.update(server, () => ({ tokens: old }));
    expect(await provider.tokens()).toEqual(old); // handed to the SDK, which then tries r1
    const rotated = { access_token: 'a2', token_type: 'Bearer', refresh_token: 'r2' };
    await new TokenStore(path).update(server, () => ({ tokens: rotated })); // the other process
    await provider.invalidateCredentials('tokens'); // r1 was refused here
    expect((await mine.get(server)).tokens).toEqual(rotated);
    await provider.tokens();
    await provider.invalidateCredentials('tokens'); // now r2 itself is refused
    expect((await mine.get(server)).tokens).toBeUndefined();
  });

  it('R11.1: a token file others may read is refused, not used', async () => {
    const path = await tokenPath();
    await writeFile(path, JSON.stringify({ version: 1, servers: {} }), { mode: 0o644 });
    await chmod(path, 0o644);
    await expect(new TokenStore(path).get(server)).rejects.toThrow(
      /can be read or written by others/,
    );
  });

  it("R11.1: a symlink at the token file's name is never followed, for reading or writing", async () => {
    const path = await tokenPath();
    const target = `${path}.target`;
    await writeFile(target, 'precious', { mode: 0o600 });
    await symlink(target, path);
    const store = new TokenStore(path);
    await expect(store.get(server)).rejects.toThrow(/symbolic link/);
    await expect(store.update(server, () => ({}))).rejects.toThrow(/symbolic link/);
    expect(await readFile(target, 'utf8')).toBe('precious');
  });

  it("R11.1: a FIFO at the token file's name is refused at once, never waited on", async () => {
    const path = await tokenPath();
    execFileSync('mkfifo', ['-m', '600', path]);
    const started = Date.now();
    await expect(new TokenStore(path).get(server)).rejects.toThrow(/not a regular file/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'R11.1: a token file that belongs to another user is refused (root: chown to nobody)',
    async () => {
      const path = await tokenPath();
      await writeFile(path, JSON.stringify({ version: 1, servers: {} }), { mode: 0o600 });
      await chown(path, 65534, 65534);
      await expect(new TokenStore(path).get(server)).rejects.toThrow(/belongs to another user/);
    },
  );

  it('R14.5: a login still waiting when the callback server stops fails at once, and keeps no timer alive', async () => {
    const listener = new CallbackListener(0);
    const port = await listener.listen();
    const waiting = listener.code('some-state', 60 * 60_000);
    const refused = await fetch(`http://127.0.0.1:${String(port)}/callback?code=x&state=other`);
    expect(refused.status).toBe(400);
    const started = Date.now();
    await listener.close();
    await expect(waiting).rejects.toThrow(/abandoned/);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('R14.5: a request no URL can be made of is answered 400, and the listener goes on', async () => {
    const listener = new CallbackListener(0);
    const port = await listener.listen();
    const waiting = listener.code('the-state', 60_000);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connectTcp(port, '127.0.0.1', () =>
        socket.write('GET //[ HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    const good = await fetch(`http://127.0.0.1:${String(port)}/callback?code=c&state=the-state`);
    expect(good.status).toBe(200);
    expect(await waiting).toBe('c');
  });
});
