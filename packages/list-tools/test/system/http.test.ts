// ahma-list-tools, called in-process, listing real servers over Streamable HTTP: ahma-shell --mode
// http (with its bearer token) and server-everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTools, toolNames, type JsonListing } from '../support/list-tools.js';
import { ahmaShell, everythingEntry, freePort, startServer, stop } from '../support/servers.js';

/** How an `ahma-shell --mode http` start ended: listening on a URL, or exited with its output. */
type HttpStart =
  | { kind: 'listening'; child: ChildProcess; url: string; tokenFile: string }
  | { kind: 'exited'; output: string };

/**
 * Starts ahma-shell in HTTP mode; resolves once it printed its URL and its token file, or on its
 * exit.
 */
function startAhmaHttp(port: number, scope: string, env: NodeJS.ProcessEnv): Promise<HttpStart> {
  const args = ['--mode', 'http', '--http-port', String(port), '--sandbox-scope', scope];
  const child = spawn(process.execPath, [ahmaShell, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const tokenFile = /the token is in (\S+)\n/.exec(output)?.[1];
      if (url !== undefined && tokenFile !== undefined) {
        resolve({ kind: 'listening', child, url, tokenFile });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => resolve({ kind: 'exited', output }));
  });
}

describe.concurrent('ahma-list-tools against ahma-shell over Streamable HTTP', () => {
  let scope = '';
  let server: ChildProcess | undefined;

  beforeAll(() => {
    scope = mkdtempSync('/var/tmp/ahma-list-http-');
  });
  afterAll(async () => {
    await stop(server);
    rmSync(scope, { recursive: true, force: true });
  });

  it('R6.10, R8.11: --http URL --token-file lists the built-ins of ahma-shell --mode http --http-port 0 (refused without the token)', async () => {
    const env = { ...process.env, XDG_CACHE_HOME: join(scope, 'cache') };
    const started = await startAhmaHttp(0, scope, env);
    if (started.kind === 'exited') {
      expect.fail(`ahma-shell --mode http --http-port 0 exited: ${started.output}`);
    }
    server = started.child;
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    const refused = await listTools(['--http', started.url, '--no-browser', '--timeout', '10']);
    expect(refused.code).toBe(1);
    const run = await listTools(['--http', started.url, '--token-file', started.tokenFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^server: ahma \d+\.\d+\.\d+/);
    expect(toolNames(run.stdout)).toEqual(
      expect.arrayContaining(['sandboxed_shell', 'status', 'await', 'cancel']),
    );

    const exited = new Promise((resolve) => started.child.once('exit', resolve));
    started.child.kill('SIGTERM');
    await exited;
    server = undefined;
  });
});

describe.concurrent('ahma-list-tools against server-everything over Streamable HTTP', () => {
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let url = '';

  beforeAll(async () => {
    const port = await freePort();
    server = await startServer([everythingEntry(), 'streamableHttp'], /listening on port (\d+)/, {
      ...process.env,
      PORT: String(port),
    });
    url = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(() => stop(server?.child));

  it('R6.10: --http URL lists the same tools, in text and json, and ends its session', async () => {
    const text = await listTools(['--http', url]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^server: mcp-servers\/everything \S+\n/);
    expect(text.stdout).toContain(
      '\necho — Echoes back the input string\n  message: string (required)',
    );
    expect(text.stdout).toMatch(/\n\n\d+ tools\n$/);

    const json = await listTools(['--http', url, '--format', 'json']);
    expect(json.code).toBe(0);
    const listing = JSON.parse(json.stdout) as JsonListing;
    expect(listing.tools.map((tool) => tool.name)).toContain('echo');
    expect(listing.tools.length).toBe(toolNames(text.stdout).length);
    // The session is ended with DELETE rather than left to expire on the server.
    expect(server?.output()).toContain('Received session termination request');
  });

  it('R6.10: a URL that is not the MCP endpoint → exit 1 with the HTTP status, no HTML', async () => {
    const run = await listTools(['--http', url.replace(/\/mcp$/, '/nope')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\/nope: the server answered HTTP 404: .*Cannot POST \/nope/);
    expect(run.stderr).not.toContain('<');
    expect(run.stderr).toContain('is this the MCP endpoint');
  });
});
