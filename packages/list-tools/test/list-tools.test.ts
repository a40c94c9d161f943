import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/ahma-list-tools.js', import.meta.url));
const pagedServer = fileURLToPath(new URL('./fixtures/paged-server.mjs', import.meta.url));
const packageJson = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version: string };

/** server-everything's entry point, found through its package.json `bin`. */
function everythingEntry(): string {
  const manifestPath = createRequire(import.meta.url).resolve(
    '@modelcontextprotocol/server-everything/package.json',
  );
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    bin: Record<string, string>;
  };
  const entry = manifest.bin['mcp-server-everything'];
  if (entry === undefined) throw new Error('server-everything has no mcp-server-everything bin');
  return join(dirname(manifestPath), entry);
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the built ahma-list-tools binary for real. */
function listTools(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A loopback port nothing listens on (free a moment ago). */
async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a server process and resolves once `ready` matches its output; returns the match. */
function startServer(
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match !== null) resolve({ child, match, output: () => output });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`server exited (${code}) before ready: ${output}`)),
    );
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface JsonListing {
  server: { name: string; version: string; instructions?: string };
  tools: {
    name: string;
    description: string | null;
    parameters: { name: string; type: string; required: boolean; description: string | null }[];
    inputSchema: { type: 'object'; properties?: Record<string, unknown> };
    outputSchema?: Record<string, unknown>;
  }[];
}

const toolHeader = /^[^\s].* — |^[\w-]+$/;

/** The tool names of a text listing (the unindented lines between the header and the count). */
function toolNames(text: string): string[] {
  const lines = text.trimEnd().split('\n').slice(1, -1);
  return lines
    .filter((line) => line !== '' && !line.startsWith(' ') && !line.startsWith('instructions: '))
    .filter((line) => toolHeader.test(line))
    .map((line) => line.split(' — ')[0] ?? line);
}

describe('ahma-list-tools against server-everything (third-party) over stdio', () => {
  const everything = everythingEntry();

  it('R6.10: prints the server line, each tool with one line per parameter, and the tool count', async () => {
    const run = await listTools(['--', process.execPath, everything, 'stdio']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^server: mcp-servers\/everything \S+\n/);
    expect(run.stdout).toMatch(/^instructions: \S.*$/m);
    expect(run.stdout).toContain(
      '\necho — Echoes back the input string\n  message: string (required) — Message to echo\n',
    );
    expect(run.stdout).toContain(
      '\nget-sum — Returns the sum of two numbers\n' +
        '  a: number (required) — First number\n' +
        '  b: number (required) — Second number\n',
    );
    expect(run.stdout).toContain(
      '  messageType: "error"|"success"|"debug" (required) — Type of message to demonstrate',
    );
    expect(run.stdout).toMatch(/\nget-tiny-image — .*\n {2}\(no parameters\)\n/);
    const names = toolNames(run.stdout);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']));
    expect(run.stdout.endsWith(`\n\n${names.length} tools\n`)).toBe(true);
  });

  it('R6.10: --format json gives the server, and per tool its parameters and raw schemas', async () => {
    const run = await listTools(['--format', 'json', '--', process.execPath, everything, 'stdio']);
    expect(run.code).toBe(0);
    const listing = JSON.parse(run.stdout) as JsonListing;
    expect(listing.server.name).toBe('mcp-servers/everything');
    expect(listing.server.instructions).toMatch(/Everything Server/);
    const echo = listing.tools.find((tool) => tool.name === 'echo');
    expect(echo).toMatchObject({
      description: 'Echoes back the input string',
      parameters: [
        { name: 'message', type: 'string', required: true, description: 'Message to echo' },
      ],
      inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
    });
    expect(echo).not.toHaveProperty('outputSchema');
    const structured = listing.tools.find((tool) => tool.name === 'get-structured-content');
    expect(structured?.outputSchema).toMatchObject({ type: 'object' });
    expect(structured?.parameters[0]).toMatchObject({
      name: 'location',
      type: '"New York"|"Chicago"|"Los Angeles"',
      required: true,
    });
  });
});

const ahmaShell = fileURLToPath(new URL('../../shell-server/bin/ahma-shell.js', import.meta.url));

describe('ahma-list-tools against ahma-shell over stdio', () => {
  let scope = '';

  beforeAll(() => {
    scope = mkdtempSync('/var/tmp/ahma-list-');
    mkdirSync(join(scope, '.ahma', 'tools'), { recursive: true });
    writeFileSync(
      join(scope, '.ahma', 'tools', 'greet.json'),
      JSON.stringify({
        name: 'greet',
        description: 'Greets',
        command: 'echo',
        hints: { custom: { default: 'Greet politely.' } },
        subcommand: [
          {
            name: 'default',
            description: 'Say hello to someone.',
            synchronous: true,
            positional_args: [
              { name: 'who', type: 'string', required: true, description: 'Whom to greet' },
            ],
          },
        ],
      }),
    );
  });
  afterAll(() => rmSync(scope, { recursive: true, force: true }));

  it('R6.10: lists the built-ins and a definition tool with its parameters', async () => {
    const env = { ...process.env, XDG_CACHE_HOME: join(scope, 'cache') };
    const run = await listTools(
      ['--', process.execPath, ahmaShell, '--mode', 'stdio', '--sandbox-scope', scope],
      env,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^server: ahma \d+\.\d+\.\d+/);
    expect(toolNames(run.stdout)).toEqual([
      'sandboxed_shell',
      'status',
      'await',
      'cancel',
      'output',
      'write_stdin',
      'activate_tools',
      'greet',
    ]);
    expect(run.stdout).toContain('  who: string (required) — Whom to greet');
    expect(run.stdout).toContain('  command: string (required)');
    expect(run.stdout.trimEnd().endsWith('8 tools')).toBe(true);
  });

  it('SPEC §2 compat: the hints of a tool file reach the listing, in text and json', async () => {
    const env = { ...process.env, XDG_CACHE_HOME: join(scope, 'cache') };
    const command = [
      '--',
      process.execPath,
      ahmaShell,
      '--mode',
      'stdio',
      '--sandbox-scope',
      scope,
    ];
    const text = await listTools(command, env);
    expect(text.stdout).toContain(
      'greet — Say hello to someone.\n  | Hints:\n  | - default: Greet politely.\n  who: string',
    );
    const json = await listTools(['--format', 'json', ...command], env);
    const tools = (JSON.parse(json.stdout) as { tools: { name: string; description: string }[] })
      .tools;
    expect(tools.find((tool) => tool.name === 'greet')?.description).toBe(
      'Say hello to someone.\n\nHints:\n- default: Greet politely.',
    );
  });
});

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

describe('ahma-list-tools against ahma-shell over Streamable HTTP', () => {
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

describe('ahma-list-tools against server-everything over Streamable HTTP', () => {
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

describe('ahma-list-tools against a paginating server (SDK low-level Server fixture)', () => {
  const expectedText = `server: paged-fixture 1.2.3
instructions: Fixture server for tests.

search — Searches files for a pattern.
  pattern: string (required) — Regular expression
  paths: array<string> — Where to look
  mode: "fast"|"full" (required) — How hard to look
  limit: integer
  ignoreCase: boolean|null
  kinds: array<"file"|"dir">

ping
  (no parameters)

report — Has an output schema that ajv cannot compile (a $ref to nothing).
  (no parameters)

env_marker — AHMA_LIST_TOOLS_MARKER=passed-through
  n: number|null

last — The only tool on the third page.
  (no parameters)

5 tools
`;

  it('R6.10: follows nextCursor over every page and renders enums, arrays and unions (stdio)', async () => {
    // The marker also shows the server inherits the caller's whole environment.
    const env = { ...process.env, AHMA_LIST_TOOLS_MARKER: 'passed-through' };
    const run = await listTools(['--', process.execPath, pagedServer, 'stdio'], env);
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, stdout: expectedText });
  });

  it('R6.10: a tool whose outputSchema ajv cannot compile is still listed, schema included', async () => {
    const run = await listTools(['--format', 'json', '--', process.execPath, pagedServer]);
    expect(run.code).toBe(0);
    const listing = JSON.parse(run.stdout) as JsonListing;
    expect(listing.server).toEqual({
      name: 'paged-fixture',
      version: '1.2.3',
      instructions: 'Fixture server for tests.\nSecond line.',
    });
    expect(listing.tools.map((tool) => tool.name)).toEqual([
      'search',
      'ping',
      'report',
      'env_marker',
      'last',
    ]);
    expect(listing.tools[2]?.outputSchema).toEqual({
      type: 'object',
      properties: { rows: { $ref: '#/$defs/missing' } },
    });
    expect(listing.tools[0]?.parameters[0]).toEqual({
      name: 'pattern',
      type: 'string',
      required: true,
      description: 'Regular expression\nwith a second line',
    });
    expect(listing.tools[1]).toEqual({
      name: 'ping',
      description: null,
      parameters: [],
      inputSchema: { type: 'object' },
    });
  });

  it('R6.10: a stateless Streamable HTTP server answering with plain JSON lists every page', async () => {
    const server = await startServer([pagedServer, 'http'], /^(\d+)\n/);
    try {
      const run = await listTools(['--http', `http://127.0.0.1:${server.match[1]}/mcp`]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('\nlast — The only tool on the third page.\n');
      expect(run.stdout.endsWith('\n5 tools\n')).toBe(true);
    } finally {
      await stop(server.child);
    }
  });

  it('R6.10: a server without the tools capability lists as 0 tools, exit 0', async () => {
    const run = await listTools(['--', process.execPath, pagedServer, 'stdio', '--no-tools']);
    expect(run).toMatchObject({ code: 0, stdout: 'server: toolless-fixture 0.0.1\n\n0 tools\n' });
  });

  it('R6.10: a pagination cursor that repeats → exit 1 instead of looping', async () => {
    const run = await listTools(['--', process.execPath, pagedServer, 'stdio', '--loop']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('paged-server.mjs stdio --loop: tools/list returned the cursor');
  });
});

describe('ahma-list-tools failures', () => {
  it('R6.10: a command that exits at once → exit 1 naming the command, with its stderr', async () => {
    const script = 'process.stderr.write("fatal: no config file\\n"); process.exit(3)';
    const run = await listTools(['--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`ahma-list-tools: ${process.execPath} -e '`);
    expect(run.stderr).toContain('the server exited before answering initialize');
    expect(run.stderr).toContain('its stderr:\nfatal: no config file\n');
  });

  it('R6.10: a command that does not exist → exit 1, command not found', async () => {
    const run = await listTools(['--', 'ahma-no-such-command-xyz', '--flag']);
    expect(run).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        'ahma-list-tools: ahma-no-such-command-xyz --flag: cannot start it: command not found\n',
    });
  });

  it('R6.10: --timeout bounds a server that never answers, and names the cause', async () => {
    const script = 'process.stdout.write("not json\\n"); setInterval(() => {}, 1000)';
    const run = await listTools(['--timeout', '0.5', '--', process.execPath, '-e', script]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no answer to the MCP initialize request within 0.5 s');
    expect(run.stderr).toContain('it wrote something that is not MCP to stdout');
    // 0.5 s plus process start-up; waiting out the SDK's 2 s close grace would exceed this.
    expect(run.ms).toBeLessThan(2500);
  });

  it('R6.10: a refused URL → exit 1 naming the URL and the cause', async () => {
    const url = `http://127.0.0.1:${await freePort()}/mcp`;
    const run = await listTools(['--http', url]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(`^ahma-list-tools: ${url}: cannot connect: connection refused`),
    );
  });

  describe('a server that answers 401', () => {
    let server: HttpServer | undefined;
    let url = '';
    beforeAll(async () => {
      server = createHttpServer((_request, response) => {
        response.writeHead(401, {
          'content-type': 'application/json',
          'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/x"',
        });
        response.end('{"error":"invalid_token"}');
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    });
    afterAll(() => new Promise((resolve) => server?.close(resolve)));

    it('R14: → exit 1 when logging in fails (this server publishes no OAuth metadata), naming the server and the cause', async () => {
      const run = await listTools([
        '--http',
        url,
        '--no-browser',
        '--callback-port',
        String(await freePort()),
      ]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        // Its registration endpoint answers like its MCP endpoint: 401 invalid_token.
        new RegExp(`^ahma-list-tools: ${url}: logging in to the server failed: invalid_token`),
      );
    });
  });
});

describe('ahma-list-tools usage', () => {
  it.each([
    ['no server', [], 'no server: give -- CMD ARGS… or --http URL'],
    ['both servers', ['--http', 'http://127.0.0.1:1/mcp', '--', 'node'], 'not both'],
    ['a bad --format', ['--format', 'yaml', '--', 'node'], '--format must be "text" or "json"'],
    ['a bad --timeout', ['--timeout', '0', '--', 'node'], '--timeout must be a positive number'],
    ['a --timeout too long', ['--timeout', '3e6', '--', 'node'], 'up to 2147483, not "3e6"'],
    ['a command without --', ['node', 'server.js'], 'unexpected argument "node"'],
    ['nothing after --', ['--'], 'no command after --'],
    ['a relative --http URL', ['--http', 'localhost/mcp'], '--http needs an absolute URL'],
    ['a non-HTTP URL', ['--http', 'ftp://example.com/mcp'], '--http needs an http: or https: URL'],
    ['an unknown option', ['--oauth', '--', 'node'], "Unknown option '--oauth'"],
    [
      'a bad --callback-port',
      ['--callback-port', '0', '--http', 'http://127.0.0.1:1/mcp'],
      '--callback-port must be a port number',
    ],
    ['a relative --logout URL', ['--logout', 'localhost/mcp'], '--logout needs an absolute URL'],
  ])('R6.10: %s → exit 2 with the usage', async (_case, args, message) => {
    const run = await listTools(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain('\nUsage: ahma-list-tools [--format text|json]');
  });

  it('R6.10: --help prints the usage with the OAuth options; --version the version', async () => {
    const help = await listTools(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: ahma-list-tools /);
    for (const option of [
      '--callback-port PORT',
      '--client-id ID',
      '--no-browser',
      '--logout URL',
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain('AHMA_HTTP_CLIENT_TOKEN_PATH');
    expect(help.stdout).toContain('--timeout SECONDS');
    const version = await listTools(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${packageJson.version}\n` });
  });
});
