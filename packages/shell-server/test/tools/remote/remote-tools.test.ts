// Remote MCP servers' tools through Ahma (SPEC §10, R14.1, R14.7), against a real authorization
// server protecting a real MCP server (@ahma/remote's test world): the login through the placeholder
// tool, the remote's tools as <server>_<tool>, calls forwarded with progress and isError, a remote
// that goes down mid-call or is unreachable answering with tool errors, never a crash or a hang.
import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  createBrowser,
  freePort,
  startOAuthWorld,
  type OAuthWorld,
} from '../../../../remote/test/support/oauth-world.js';
import {
  it,
  textOf,
  waitFor,
  type E2E,
  type RunningServer,
  type Scope,
} from '../../support/harness.js';

async function remoteWorld(e2e: E2E, options: Parameters<typeof startOAuthWorld>[0] = {}) {
  const world = await startOAuthWorld(options);
  e2e.onCleanup(() => world.close());
  return world;
}

/** A scope whose .ahma/mcp.json names `servers`. */
async function scopeWith(e2e: E2E, servers: Record<string, unknown>): Promise<Scope> {
  const scope = await e2e.scope({ noTools: true });
  await writeFile(join(scope.dir, '.ahma', 'mcp.json'), JSON.stringify({ servers }));
  return scope;
}

const names = async (server: RunningServer) =>
  (await server.client.listTools()).tools.map((tool) => tool.name);

/** Logs in through the placeholder tool: its answer names the URL, the browser follows it. */
async function logIn(server: RunningServer, name: string): Promise<void> {
  let changed = false;
  server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed = true;
  });
  const first = await server.call(`${name}_connect`);
  expect(first.isError).toBe(true);
  const url = /(http:\/\/localhost:\d+\/auth\?\S+)/.exec(textOf(first))?.[1];
  expect(url, textOf(first)).toBeDefined();
  await createBrowser().authorize(url ?? '');
  await waitFor(() => changed, 'tools/list_changed after the login');
}

/** A scope whose mcp.json names `world`'s MCP server as `acme`. */
const acmeScope = (e2e: E2E, world: OAuthWorld) =>
  scopeWith(e2e, { acme: { type: 'http', url: world.mcpUrl.href } });

/** A server of a scope naming `world` as `acme`, logged in to it. */
async function loggedIn(e2e: E2E, world: OAuthWorld): Promise<RunningServer> {
  const server = await serverFor(e2e, await acmeScope(e2e, world));
  await logIn(server, 'acme');
  return server;
}

async function serverFor(e2e: E2E, scope: Scope): Promise<RunningServer> {
  return e2e.inProcess(scope, ['--oauth-callback-port', String(await freePort())]);
}

describe.concurrent('remote MCP servers through Ahma', { timeout: 60_000 }, () => {
  it('R14.1: an unauthorised remote offers <server>_connect, whose answer is the login URL; after the login its tools are listed as <server>_<tool> with their schemas', async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e);
    const scope = await acmeScope(e2e, world);
    const server = await serverFor(e2e, scope);
    expect(await names(server)).toContain('acme_connect');
    const answer = await server.call('acme_connect');
    expect(textOf(answer)).toContain('needs a login. Ask the user to open this URL');
    await logIn(server, 'acme');
    const { tools } = await server.client.listTools();
    const echo = tools.find((tool) => tool.name === 'acme_echo');
    expect(echo?.inputSchema).toMatchObject({ properties: { text: { type: 'string' } } });
    expect(echo?.description).toContain('remote MCP server "acme"');
    expect(tools.map((tool) => tool.name)).not.toContain('acme_connect');
  });

  it("R14.7: calls are forwarded: the result, the remote's isError, and its progress", async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e);
    const server = await loggedIn(e2e, world);
    const echoed = await server.call('acme_echo', { text: 'through ahma' });
    expect(echoed).toMatchObject({ content: [{ type: 'text', text: 'through ahma' }] });
    expect(echoed.isError).toBeFalsy();
    expect((await server.call('acme_fail')).isError).toBe(true);
    const slow = await server.call('acme_slow', {}, { progress: true });
    expect(textOf(slow)).toBe('slow done');
    expect(server.progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5]);
  });

  it("R14.7: the remote's tools/list_changed updates Ahma's list, and Ahma tells its own client", async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e);
    const server = await loggedIn(e2e, world);
    let changed = false;
    server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed = true;
    });
    expect(await names(server)).not.toContain('acme_extra');
    expect(textOf(await server.call('acme_add_tool'))).toBe('added');
    await waitFor(() => changed, 'tools/list_changed from Ahma');
    expect(await names(server)).toContain('acme_extra');
    expect(textOf(await server.call('acme_extra'))).toBe('extra');
  });

  it("R14.7: a storm of the remote's tools/list_changed is one or two listings, not fifty", async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e);
    const server = await loggedIn(e2e, world);
    const before = world.listings;
    expect(textOf(await server.call('acme_storm'))).toBe('stormed');
    await waitFor(() => world.listings > before, 'a listing after the storm');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(world.listings - before).toBeLessThanOrEqual(2);
  });

  it('R14.7: cancelling a forwarded call cancels it at the remote', async ({ e2e }) => {
    const world = await remoteWorld(e2e, { slowMs: 3000 });
    const server = await loggedIn(e2e, world);
    const abort = new AbortController();
    const call = server.call('acme_slow', {}, { request: { signal: abort.signal } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    abort.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => world.cancelled === 1, 'the remote to see the cancellation');
  });

  it('R14: a second server reuses the stored tokens: the tools are listed without a login', async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e);
    const scope = await acmeScope(e2e, world);
    const first = await serverFor(e2e, scope);
    await logIn(first, 'acme');
    await first.close();
    const second = await serverFor(e2e, scope);
    await waitFor(async () => (await names(second)).includes('acme_echo'), 'the remote tools');
    expect((await second.call('acme_echo', { text: 'again' })).isError).toBeFalsy();
  });

  it('R14.7: a remote that goes down mid-call gives that call a tool error, and later calls a prompt one while it is down', async ({
    e2e,
  }) => {
    const world = await remoteWorld(e2e, { slowMs: 3000 });
    const server = await loggedIn(e2e, world);
    const call = server.call('acme_slow');
    await new Promise((resolve) => setTimeout(resolve, 300));
    world.down(true);
    world.cut();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('did not answer slow');
    const started = Date.now();
    const later = await server.call('acme_echo', { text: 'x' });
    expect(later.isError).toBe(true);
    expect(textOf(later)).toMatch(/acme.*(not connected|did not answer)/);
    expect(Date.now() - started).toBeLessThan(20_000);
    world.down(false);
    await waitFor(
      async () => !(await server.call('acme_echo', { text: 'back' })).isError,
      'the remote back',
    );
  });

  it('R14.7: an unreachable remote answers with a tool error naming the cause, within the connect timeout', async ({
    e2e,
  }) => {
    const port = await freePort();
    const server = await e2e.inProcess(
      await scopeWith(e2e, { gone: { type: 'http', url: `http://127.0.0.1:${String(port)}/mcp` } }),
      ['--oauth-callback-port', String(await freePort())],
    );
    const answer = await server.call('gone_connect');
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toContain('"gone"');
    expect(textOf(answer)).toMatch(/not connected: .*(ECONNREFUSED|fetch failed)/);
  });

  it('SPEC §10: entries that are not "type": "http" are skipped, and a token file commands could write is refused', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, { local: { type: 'stdio', command: 'x' } });
    const server = await e2e.inProcess(scope);
    expect((await names(server)).filter((name) => name.startsWith('local'))).toEqual([]);
    const exposed = {
      ...scope,
      env: { ...scope.env, AHMA_HTTP_CLIENT_TOKEN_PATH: join(scope.dir, 'tokens.json') },
    };
    await writeFile(
      join(scope.dir, '.ahma', 'mcp.json'),
      JSON.stringify({ servers: { acme: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }),
    );
    await expect(e2e.inProcess(exposed)).rejects.toThrow(/sandboxed commands can write/);
  });

  it('SPEC §10: a token path that reaches the scope through a symlinked directory is refused too', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, { acme: { type: 'http', url: 'http://127.0.0.1:1/mcp' } });
    const link = join(await e2e.outsideDir(), 'to-scope');
    await symlink(scope.dir, link);
    const env = { ...scope.env, AHMA_HTTP_CLIENT_TOKEN_PATH: join(link, 'tokens.json') };
    await expect(e2e.inProcess({ ...scope, env })).rejects.toThrow(/sandboxed commands can write/);
  });
});
