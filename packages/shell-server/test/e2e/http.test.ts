// `ahma-shell --mode http`, the built binary (R8.1, R8B, R8D, SPEC §6 security): it prints the URL
// it listens on (any free port with --http-port 0) and serves the SDK's real clients; SIGTERM and
// SIGINT end it with exit code 0 and leave no process behind (checked in /proc); it refuses to
// start off loopback without a token; --log-to-stderr echoes the JSON-RPC traffic. With
// --session-isolation each session is its own process on its client's first root. The tests run
// at once, each with its own servers.
import { existsSync } from 'node:fs';
import { chmod, mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  descendantsOf,
  exists,
  it,
  processesMatching,
  readLog,
  sessionProcessesOn,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type StartedResult,
} from '../support/harness.js';
import { watchHeavyModules } from '../support/heavy-modules.js';
import { httpBinary, httpClient, INITIALIZE, post } from '../support/http.js';

describe.concurrent('ahma-shell --mode http', { timeout: 60_000 }, () => {
  it('R8.1: --http-port 0 listens on a free loopback port, prints the URL and logs it; the SDK client is served, and its start loads neither the SDK v2 nor the SSE transport', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const heavy = watchHeavyModules(scope, 'http');
    const server = await httpBinary(e2e, { ...scope, env: { ...scope.env, ...heavy.env } });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.url).not.toMatch(/:0\//);
    // R8.11: authenticated by default, on loopback too: the token it made, and where it is.
    expect(server.stderr()).toMatch(
      /clients must send "Authorization: Bearer <token>"; the token is in \S+\/ahma\/http-token\n/,
    );
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.stderr()).not.toContain(server.token);
    expect((await post(server.url, INITIALIZE)).status).toBe(401);
    const client = await httpClient(e2e, server.url, server);
    expect(textOf(await client.call('e2e_sync', { value: 'from-binary' }))).toContain(
      'from-binary',
    );
    const log = await readLog(scope);
    expect(log.lines).toContainEqual(
      expect.objectContaining({ msg: 'listening', url: server.url }),
    );
    // A 2025 client over Streamable HTTP needs neither (modern-on-demand.ts, routes.ts).
    expect(await heavy.loaded()).toBe('');
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`R8.1: ${signal} ends the server with exit code 0: sessions closed, their commands killed, no process left`, async ({
      e2e,
    }) => {
      const scope = await e2e.scope();
      const server = await httpBinary(e2e, scope, ['--inline-wait', '0']);
      const streamable = await httpClient(e2e, server.url, server);
      const legacy = await httpClient(e2e, new URL('/sse', server.url).href, server, {
        legacy: true,
      });
      const marker = uniqueMarker();
      for (const [client, who] of [
        [streamable, 'streamable'],
        [legacy, 'legacy'],
      ] as const) {
        const started = structured<StartedResult>(
          // Beside each other, not two writers taking turns (SPEC §14 lanes).
          await client.call('sandboxed_shell', {
            command: `exec -a ${marker}-${who} sleep 300`,
            concurrency: 'service',
          }),
        );
        expect(started.status).toBe('started');
      }
      await waitFor(
        async () => (await processesMatching(marker)).length === 2,
        'both commands to run',
      );
      const tree = await descendantsOf(server.pid);
      expect(tree.length).toBeGreaterThan(0);

      process.kill(server.pid, signal);
      const exit = await server.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      // The clients saw their streams end with the server: expected here, not a server fault.
      await Promise.all([streamable.close(), legacy.close()]);
      for (const client of [streamable, legacy]) client.clientErrors.splice(0);
      await waitFor(
        () => tree.every((info) => !exists(info.pid)),
        'every process of the server to be gone',
        8000,
      );
      expect(await processesMatching(marker)).toEqual([]);
      const log = await readLog(scope);
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'shutting down', signal }));
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'stopped' }));
    });
  }

  it('R8B: with --log-to-stderr the JSON-RPC traffic is echoed on stderr with its prefixes', async ({
    e2e,
  }) => {
    const server = await httpBinary(e2e, await e2e.scope(), ['--log-to-stderr']);
    const response = await post(server.url, INITIALIZE, server.headers);
    expect(response.status).toBe(200);
    await waitFor(() => server.stderr().includes('← STDOUT:'), 'the answer echoed');
    const stderr = server.stderr();
    expect(stderr).toContain(
      '→ STDIN: {\n  "jsonrpc": "2.0",\n  "id": 0,\n  "method": "initialize"',
    );
    expect(stderr).toMatch(/← STDOUT: \{\n {2}"result": \{/);
    await post(server.url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, server.headers);
    await waitFor(() => server.stderr().includes('⚠ STDERR:'), 'the refusal echoed');
  });
});

describe.concurrent('refusals at start', { timeout: 60_000 }, () => {
  it('R8.11: --http-no-auth is loopback only, and contradicts a token: both exit 2 saying so', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const base = ['--mode', 'http', '--http-port', '0', '--sandbox-scope', scope.dir];
    const [offLoopback, withToken] = await Promise.all([
      e2e.run([...base, '--http-host', '0.0.0.0', '--http-no-auth'], {
        cwd: scope.dir,
        env: scope.env,
      }),
      e2e.run([...base, '--http-no-auth'], {
        cwd: scope.dir,
        env: { ...scope.env, AHMA_HTTP_TOKEN: 'some-token' },
      }),
    ]);
    expect(offLoopback.code).toBe(2);
    expect(offLoopback.stdout).toBe('');
    expect(offLoopback.stderr).toContain(
      '--http-no-auth is for loopback only: --http-host 0.0.0.0 is reachable from other machines',
    );
    expect(withToken.code).toBe(2);
    expect(withToken.stderr).toContain('--http-no-auth contradicts the token given');
  });

  it('R8.11: without a token the server makes one (0600, in its private state) and keeps it across starts; --http-no-auth serves without one and warns', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const first = await httpBinary(e2e, scope, ['--http-host', '0.0.0.0']);
    const url = first.url.replace('0.0.0.0', '127.0.0.1');
    expect((await post(url, INITIALIZE)).status).toBe(401);
    expect((await post(url, INITIALIZE, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(url, INITIALIZE, first.headers)).status).toBe(200);
    const tokenFile = join(scope.stateRoot, 'http-token');
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    process.kill(first.pid, 'SIGTERM');
    await first.exited;
    const second = await httpBinary(e2e, scope);
    expect(second.token).toBe(first.token);

    const open = await httpBinary(e2e, await e2e.scope(), ['--http-no-auth']);
    expect(open.token).toBeUndefined();
    expect(open.stderr()).toContain(
      'WARNING: --http-no-auth: any local process can connect and run commands as this user',
    );
    expect((await post(open.url, INITIALIZE)).status).toBe(200);
  });

  it('R8.11: a token file of the server that others can read, or that is a link, is refused at start, not used', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const tokenFile = join(scope.stateRoot, 'http-token');
    await mkdir(scope.stateRoot, { recursive: true, mode: 0o700 });
    await writeFile(tokenFile, 'planted-token\n', { mode: 0o644 });
    await chmod(tokenFile, 0o644);
    const args = ['--mode', 'http', '--http-port', '0', '--sandbox-scope', scope.dir];
    const readable = await e2e.run(args, { cwd: scope.dir, env: scope.env });
    expect(readable.code).toBe(1);
    expect(readable.stderr).toContain(
      `the HTTP token file ${tokenFile} can be read or written by others`,
    );
    await rm(tokenFile);
    const outside = await e2e.outsideDir();
    await writeFile(join(outside, 'token'), 'planted-token\n', { mode: 0o600 });
    await symlink(join(outside, 'token'), tokenFile);
    const linked = await e2e.run(args, { cwd: scope.dir, env: scope.env });
    expect(linked.code).toBe(1);
    expect(linked.stderr).toContain(`the HTTP token file ${tokenFile} is a symbolic link`);
  });

  it('SPEC §6 security: off loopback with a token file (or AHMA_HTTP_TOKEN) it starts and wants the token', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const token = `tok-${uniqueMarker()}`;
    const tokenFile = join(outside, 'token');
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const fromFile = await httpBinary(e2e, scope, [
      '--http-host',
      '0.0.0.0',
      '--http-token-file',
      tokenFile,
    ]);
    const url = fromFile.url.replace('0.0.0.0', '127.0.0.1');
    expect((await post(url, INITIALIZE)).status).toBe(401);
    expect((await post(url, INITIALIZE, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect(fromFile.stderr()).not.toContain(token);

    const fromEnv = await httpBinary(
      e2e,
      { ...scope, env: { ...scope.env, AHMA_HTTP_TOKEN: token } },
      ['--http-host', '0.0.0.0'],
    );
    const envUrl = fromEnv.url.replace('0.0.0.0', '127.0.0.1');
    expect((await post(envUrl, INITIALIZE)).status).toBe(401);
    expect((await post(envUrl, INITIALIZE, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await readLog(scope)).text).not.toContain(token);
  });

  it('SPEC §6 security: an empty or unreadable token file exits 2 naming the file, not its content', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const outside = await e2e.outsideDir();
    const empty = join(outside, 'empty');
    await writeFile(empty, '  \n');
    const cases = [
      [empty, 'the token is empty'],
      [join(outside, 'missing'), 'cannot read it (ENOENT)'],
    ] as const;
    const results = await Promise.all(
      cases.map(([file]) =>
        e2e.run(
          [
            '--mode',
            'http',
            '--http-port',
            '0',
            '--http-token-file',
            file,
            '--sandbox-scope',
            scope.dir,
          ],
          { cwd: scope.dir, env: scope.env },
        ),
      ),
    );
    cases.forEach(([file, why], index) => {
      expect(results[index]?.code, file).toBe(2);
      expect(results[index]?.stderr, file).toContain(`--http-token-file ${file}: ${why}`);
    });
  });

  it('R8.1: --http-port outside 0…65535 exits 2 with a clear message', async ({ e2e }) => {
    const ports = ['65536', '-1', 'http', '1.5'];
    const results = await Promise.all(
      ports.map((port) => e2e.run(['--mode', 'http', `--http-port=${port}`])),
    );
    ports.forEach((port, index) => {
      expect(results[index]?.code, port).toBe(2);
      expect(results[index]?.stderr, port).toContain('--http-port must be a port number');
    });
  });

  it('R8.1: a port already in use exits 1 saying so', async ({ e2e }) => {
    const scope = await e2e.scope();
    const first = await httpBinary(e2e, scope);
    const port = new URL(first.url).port;
    const result = await e2e.run(
      ['--mode', 'http', '--http-port', port, '--sandbox-scope', scope.dir],
      { cwd: scope.dir, env: scope.env },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
  });
});

/** An SDK client that declares roots and names `root` as its first; closed at cleanup. */
async function rootsClient(e2e: E2E, url: string, root: string, headers: Record<string, string>) {
  const client = new Client(
    { name: 'isolation-e2e', version: '1.0.0' },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(root).href, name: 'project' }],
  }));
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  e2e.onCleanup(() => client.close().catch(() => undefined));
  const shell = async (command: string) =>
    structured<CommandResult>(
      (await client.callTool({
        name: 'sandboxed_shell',
        arguments: { command },
      })) as CallToolResult,
    );
  return { client, transport, shell };
}

/** The roots of these tests are e2e.outsideDir()s, beside the server's scope in /var/tmp. */
const OUTSIDE_ALLOWED = ['--allowed-roots', '/var/tmp'];

describe.concurrent('ahma-shell --mode http --session-isolation', { timeout: 60_000 }, () => {
  it("R8D.3, R8D.7: two sessions with different roots run in their own processes and cannot write into each other's scope", async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const [rootA, rootB] = [await e2e.outsideDir(), await e2e.outsideDir()];
    const server = await httpBinary(e2e, scope, [
      '--session-isolation',
      '--sync',
      ...OUTSIDE_ALLOWED,
    ]);
    const a = await rootsClient(e2e, server.url, rootA, server.headers);
    const b = await rootsClient(e2e, server.url, rootB, server.headers);
    expect((await a.shell('pwd; touch mine')).output).toBe(`${rootA}\n`);
    expect((await b.shell('pwd; touch mine')).output).toBe(`${rootB}\n`);
    expect(existsSync(join(rootA, 'mine')) && existsSync(join(rootB, 'mine'))).toBe(true);
    const across = await a.shell(`touch ${rootB}/from-a`);
    expect(across.status).toBe('failed');
    expect(existsSync(join(rootB, 'from-a'))).toBe(false);
    expect((await b.shell(`touch ${rootA}/from-b`)).status).toBe('failed');
    expect(existsSync(join(rootA, 'from-b'))).toBe(false);
    // Each session is a process of its own, on its own scope.
    expect(await sessionProcessesOn(server.pid, rootA)).toHaveLength(1);
    expect(await sessionProcessesOn(server.pid, rootB)).toHaveLength(1);
  });

  it('R8D.12, R8D.13: roots/list_changed after the lock ends the session; its later requests get 403', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const root = await e2e.outsideDir();
    const server = await httpBinary(e2e, scope, [
      '--session-isolation',
      '--sync',
      ...OUTSIDE_ALLOWED,
    ]);
    const a = await rootsClient(e2e, server.url, root, server.headers);
    expect((await a.shell('pwd')).output).toBe(`${root}\n`);
    const sessionId = a.transport.sessionId;
    await a.client.sendRootsListChanged();
    const answer = await waitFor(async () => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-session-id': sessionId ?? '',
          ...server.headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      return response.status === 403 ? response : undefined;
    }, 'the session to refuse with 403');
    expect(await answer.text()).toMatch(/changed its roots/);
    await waitFor(
      async () => (await sessionProcessesOn(server.pid, root)).length === 0,
      "the session's process to be gone",
    );
  });

  it('R8D.10: SIGTERM ends an isolated server with exit code 0: its session processes and their commands are gone', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const root = await e2e.outsideDir();
    const server = await httpBinary(e2e, scope, [
      '--session-isolation',
      '--inline-wait',
      '0',
      ...OUTSIDE_ALLOWED,
    ]);
    const a = await rootsClient(e2e, server.url, root, server.headers);
    const marker = uniqueMarker();
    expect((await a.shell(`exec -a ${marker} sleep 300`)).status).toBe('started');
    await waitFor(async () => (await processesMatching(marker)).length === 1, 'the command to run');
    const tree = await descendantsOf(server.pid);
    expect(await sessionProcessesOn(server.pid, root)).toHaveLength(1);
    process.kill(server.pid, 'SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await waitFor(
      () => tree.every((info) => !exists(info.pid)),
      'every process of the server to be gone',
      8000,
    );
    expect(await processesMatching(marker)).toEqual([]);
  });

  it("R7.6, R8D.7: a client's root that holds the server's private state (or lies in it) is refused: no session can write another's state", async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    // Every root tried is allowed, so what refuses them is the private state.
    const server = await httpBinary(e2e, scope, [
      '--session-isolation',
      '--sync',
      '--allowed-roots',
      join(scope.stateRoot, '..', '..', '..'),
    ]);
    for (const root of [
      scope.stateRoot,
      join(scope.stateRoot, '..'),
      join(scope.stateRoot, 'servers'),
    ]) {
      const a = await rootsClient(e2e, server.url, root, server.headers);
      await expect(a.shell('touch planted')).rejects.toThrow(/overlaps the server's private state/);
      expect(existsSync(join(root, 'planted'))).toBe(false);
    }
  });

  it('R8.5: a session process killed with SIGKILL is restarted on its scope, and the other session never notices', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const [rootA, rootB] = [await e2e.outsideDir(), await e2e.outsideDir()];
    const server = await httpBinary(e2e, scope, [
      '--session-isolation',
      '--sync',
      ...OUTSIDE_ALLOWED,
    ]);
    const a = await rootsClient(e2e, server.url, rootA, server.headers);
    const b = await rootsClient(e2e, server.url, rootB, server.headers);
    expect((await a.shell('pwd')).output).toBe(`${rootA}\n`);
    expect((await b.shell('pwd')).output).toBe(`${rootB}\n`);
    const [victim] = await sessionProcessesOn(server.pid, rootA);
    expect(victim).toBeDefined();
    process.kill(victim?.pid ?? 0, 'SIGKILL');
    expect((await b.shell('echo still-here')).output).toBe('still-here\n');
    const again = await waitFor(async () => {
      const result = await a.shell('pwd').catch(() => undefined);
      return result?.status === 'completed' ? result : undefined;
    }, 'the killed session to answer again');
    expect(again.output).toBe(`${rootA}\n`);
  });
});
