// ahma-list-tools, called in-process, listing real servers it starts over stdio: server-everything
// (third party), ahma-shell, and a paginating SDK fixture.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listTools, toolNames, type JsonListing } from '../support/list-tools.js';
import { ahmaShell, everythingEntry, pagedServer, startServer, stop } from '../support/servers.js';

describe.concurrent('ahma-list-tools against server-everything (third-party) over stdio', () => {
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

describe.concurrent('ahma-list-tools against ahma-shell over stdio', () => {
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

describe.concurrent(
  'ahma-list-tools against a paginating server (SDK low-level Server fixture)',
  () => {
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
  },
);
