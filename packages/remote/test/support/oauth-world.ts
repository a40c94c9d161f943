// A real OAuth world for the tests (R14): an OAuth 2.1 / OpenID authorization server
// (oidc-provider, in this process: dynamic registration, PKCE required, refresh tokens, revocation,
// resource indicators issuing JWT access tokens for the MCP server) in front of a real MCP server
// (the SDK's Streamable HTTP transport behind its requireBearerAuth middleware, publishing its
// protected-resource metadata). And a browser: fetch that follows the authorization URL, keeps the
// cookies, and submits the login and consent forms, to end at the redirect URI like a person would.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import express from 'express';
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import * as z from 'zod';

// oidc-provider tells, through console.info and console.warn, that it runs on Node 20 and in its
// development mode (in-memory store, built-in login pages): true of this test server and nothing
// the code under test said. Those lines alone are dropped; every other console call still fails
// the test (vitest.setup.ts). It is imported after the filter is in place: it warns on import.
for (const method of ['info', 'warn'] as const) {
  // eslint-disable-next-line no-console -- the filter wraps console itself
  const original = console[method];
  // eslint-disable-next-line no-console -- the filter wraps console itself
  console[method] = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider ')) return;
    original(...args);
  };
}
const { default: Provider, errors } = await import('oidc-provider');

export interface OAuthWorld {
  /** The MCP endpoint, e.g. http://localhost:PORT/mcp. */
  readonly mcpUrl: URL;
  readonly issuer: string;
  /** The authorization server's events (grant.success, grant.error: invalid_grant, …). */
  readonly events: string[];
  /** Requests the MCP server answered 401. */
  unauthorized: number;
  /** Calls of `slow` its client cancelled while it ran. */
  cancelled: number;
  /** tools/list requests the MCP server received. */
  listings: number;
  /** Revokes a token at the authorization server's revocation endpoint. */
  revoke(token: string, clientId: string, hint: 'refresh_token' | 'access_token'): Promise<void>;
  /** Makes the MCP server refuse (503) or serve again, to play a remote that went down. */
  down(isDown: boolean): void;
  /** Drops every open connection of the MCP server (calls in progress lose their answer). */
  cut(): void;
  close(): Promise<void>;
}

export interface WorldOptions {
  /** Access token lifetime, seconds (short to test refresh). */
  readonly accessTokenSeconds?: number;
  /** Milliseconds the `slow` tool takes (a call in progress when the server goes down). */
  readonly slowMs?: number;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

export async function startOAuthWorld(options: WorldOptions = {}): Promise<OAuthWorld> {
  const accessTokenTTL = options.accessTokenSeconds ?? 300;
  const mcpHttp = createServer();
  const mcpPort = await listen(mcpHttp);
  const mcpUrl = new URL(`http://localhost:${String(mcpPort)}/mcp`);

  const asHttp = createServer();
  const issuer = `http://localhost:${String(await listen(asHttp))}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    clients: [],
    jwks: { keys: [jwk] },
    cookies: { keys: ['ahma-test-cookie-key'] },
    scopes: ['openid', 'offline_access', 'mcp'],
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => mcpUrl.href,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== mcpUrl.href) throw new errors.InvalidTarget();
          return {
            scope: 'mcp',
            audience: mcpUrl.href,
            accessTokenTTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: { AccessToken: accessTokenTTL, RefreshToken: 24 * 3600 },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  const events: string[] = [];
  const record = (event: string) => (_ctx: unknown, error?: { error?: string }) =>
    events.push(error?.error === undefined ? event : `${event}: ${error.error}`);
  provider.on('grant.success', record('grant.success'));
  provider.on('grant.error', record('grant.error'));
  provider.on(
    'registration_create.success' as 'grant.success',
    record('registration_create.success'),
  );
  asHttp.on('request', provider.callback());

  const asMetadata = (await (
    await fetch(`${issuer}/.well-known/oauth-authorization-server`)
  ).json()) as OAuthMetadata;
  const jwks = createRemoteJWKSet(new URL(asMetadata.jwks_uri ?? `${issuer}/jwks`));
  const world: OAuthWorld = {
    mcpUrl,
    issuer,
    events,
    unauthorized: 0,
    cancelled: 0,
    listings: 0,
    revoke: async (token, clientId, hint) => {
      const response = await fetch(asMetadata.revocation_endpoint ?? `${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, token_type_hint: hint, client_id: clientId }),
      });
      if (!response.ok) throw new Error(`revocation: ${String(response.status)}`);
    },
    down: (isDown) => {
      isDownNow = isDown;
    },
    cut: () => {
      mcpHttp.closeAllConnections();
    },
    close: async () => {
      await stop(mcpHttp);
      await stop(asHttp);
    },
  };
  let isDownNow = false;

  const verifier = {
    async verifyAccessToken(token: string) {
      try {
        const { payload } = await jwtVerify(token, jwks, {
          issuer,
          audience: mcpUrl.href,
          typ: 'at+jwt',
        });
        return {
          token,
          clientId: String(payload['client_id']),
          scopes: String(payload['scope'] ?? '')
            .split(' ')
            .filter(Boolean),
          expiresAt: payload.exp ?? 0,
          resource: mcpUrl,
        };
      } catch (error) {
        // Anything else would be a 500, and the client would never refresh.
        throw new InvalidTokenError(String(error));
      }
    },
  };
  const app = express();
  app.use((_req, res, next) => {
    if (isDownNow) {
      res.status(503).send('down for maintenance');
      return;
    }
    res.on('finish', () => {
      if (res.statusCode === 401) world.unauthorized += 1;
    });
    next();
  });
  app.use(express.json());
  app.use((req, _res, next) => {
    if ((req.body as { method?: unknown } | undefined)?.method === 'tools/list')
      world.listings += 1;
    next();
  });
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata: asMetadata,
      resourceServerUrl: mcpUrl,
      resourceName: 'Ahma OAuth test server',
      // offline_access: the client asks for it, and so gets a refresh token.
      scopesSupported: ['mcp', 'offline_access'],
    }),
  );
  const bearer = requireBearerAuth({
    verifier,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    expectedResource: mcpUrl,
  });
  // Sessionful, so the server can tell the client its tools changed (on the client's GET stream).
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  app.all('/mcp', bearer, async (req, res) => {
    const id = req.header('mcp-session-id');
    const known = id === undefined ? undefined : sessions.get(id);
    if (known !== undefined) {
      await known.handleRequest(req, res, req.body);
      return;
    }
    if (req.method !== 'POST' || id !== undefined) {
      res.status(id === undefined ? 400 : 404).json({ error: 'no such session' });
      return;
    }
    const mcp = remoteServer(options, () => (world.cancelled += 1));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  mcpHttp.on('request', app);
  return world;
}

/** The remote's tools: echo, fail, slow (progress), and add_tool (its list then changes). */
function remoteServer(options: WorldOptions, onCancelled: () => void): McpServer {
  const mcp = new McpServer({ name: 'oauth-test-remote', version: '1.0.0' });
  mcp.registerTool(
    'echo',
    { description: 'Echoes the text back.', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  mcp.registerTool('fail', { description: 'Always a tool error.', inputSchema: {} }, () => ({
    content: [{ type: 'text', text: 'it failed' }],
    isError: true,
  }));
  mcp.registerTool(
    'slow',
    { description: 'Reports progress, then answers.', inputSchema: {} },
    async (_args, extra) => {
      const steps = 5;
      for (let step = 1; step <= steps; step += 1) {
        await new Promise((resolve) => setTimeout(resolve, (options.slowMs ?? 500) / steps));
        if (extra.signal.aborted) {
          onCancelled();
          break;
        }
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: 'slow done' }] };
    },
  );
  mcp.registerTool(
    'storm',
    { description: 'Says its tools changed, 50 times.', inputSchema: {} },
    () => {
      for (let i = 0; i < 50; i += 1) mcp.sendToolListChanged();
      return { content: [{ type: 'text', text: 'stormed' }] };
    },
  );
  mcp.registerTool('add_tool', { description: 'Adds the tool "extra".', inputSchema: {} }, () => {
    // Registering after the connection sends notifications/tools/list_changed.
    mcp.registerTool('extra', { description: 'Added at run time.', inputSchema: {} }, () => ({
      content: [{ type: 'text', text: 'extra' }],
    }));
    return { content: [{ type: 'text', text: 'added' }] };
  });
  return mcp;
}

/** A browser that signs in as `login` and consents to whatever is asked. */
export function createBrowser(login = 'alice') {
  const cookies = new Map<string, string>();
  const keep = (response: Response) => {
    for (const header of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = header.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1);
      const expired = attributes.some((a) => /max-age=0|expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  };
  /** Follows `start` to its end: the final response's URL, status and body. */
  async function authorize(
    start: string,
    rewrite: (url: string) => string = (url) => url,
  ): Promise<{ url: string; status: number; body: string }> {
    let url = start;
    let init: RequestInit = { method: 'GET' };
    for (let hop = 0; hop < 20; hop += 1) {
      url = rewrite(url);
      const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const response = await fetch(url, {
        ...init,
        redirect: 'manual',
        headers: { ...(init.headers as Record<string, string> | undefined), cookie },
      });
      keep(response);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        url = new URL(location, url).href;
        init = { method: 'GET' };
        continue;
      }
      const body = await response.text();
      const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(
        body,
      );
      if (form === null) return { url, status: response.status, body };
      const fields = new URLSearchParams();
      for (const [, name = '', value = ''] of (form[2] ?? '').matchAll(
        /<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?/g,
      )) {
        fields.set(name, name === 'login' ? login : name === 'password' ? 'secret' : value);
      }
      url = new URL(form[1] ?? '', url).href;
      init = {
        method: 'POST',
        body: fields.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      };
    }
    throw new Error('the authorization did not end within 20 hops');
  }
  return { authorize };
}

/** A TCP port free right now on 127.0.0.1 (for a callback server that must name its port first). */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await stop(server);
  return port;
}
