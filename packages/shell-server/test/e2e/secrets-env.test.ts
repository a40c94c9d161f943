// R7.9 end to end, through the BUILT server over stdio: no command sees a variable Ahma reads as a
// secret (AHMA_HTTP_TOKEN, AHMA_HTTP_TOKEN_FILE, AHMA_OAUTH_CLIENT_SECRET), the API key a livelog
// tool names (also one added while the server runs), or what --env-deny names (names and globs),
// neither in `env` nor in /proc/self/environ; every other variable passes. Commands in warm shells
// and spawned directly (--no-shell-pool), registered commands, sequence steps and isolated
// sessions alike; the livelog monitor itself still sends its key. The tests run at once.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { envDenyProblem } from '@ahma/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { describe, expect } from 'vitest';
import { createIsolatedSession } from '../../src/isolation/isolated-session.js';
import { parseCommandLine } from '../../src/cli/options.js';
import { isolatedChildCommand } from '../../src/isolation/child-command.js';
import {
  it,
  processes,
  structured,
  textOf,
  uniqueMarker,
  waitFor,
  type CommandResult,
  type E2E,
  type Operations,
  type RunningServer,
  type Scope,
  type StartedResult,
} from '../support/harness.js';
import { LlmServer } from '../support/llm-server.js';

/** Variables no command may see, each with a value of its own. */
function secrets(): Record<string, string> {
  return {
    AHMA_HTTP_TOKEN: `http-token-${uniqueMarker()}`,
    AHMA_HTTP_TOKEN_FILE: `/srv/token-file-${uniqueMarker()}`,
    AHMA_OAUTH_CLIENT_SECRET: `oauth-secret-${uniqueMarker()}`,
    E2E_LIVELOG_KEY: `livelog-key-${uniqueMarker()}`,
    AWS_SECRET_ACCESS_KEY: `aws-secret-${uniqueMarker()}`,
    AWS_SESSION_TOKEN: `aws-session-${uniqueMarker()}`,
    DB_PASSWORD: `db-password-${uniqueMarker()}`,
  };
}

/** Variables that pass (AWSOME is no match of AWS_*, DB_PASSWORDS none of DB_PASSWOR?). */
const ORDINARY = { E2E_ORDINARY: 'ordinary-value', AWSOME: 'awsome-value', DB_PASSWORDS: 'kept' };
const DENY = ['--env-deny', 'AWS_*,DB_PASSWOR?'];

/** A livelog tool file naming `${variable}` as its API key. */
function livelogTool(name: string, variable: string, baseUrl = 'http://127.0.0.1:9/v1') {
  return {
    name,
    description: 'Watch a test source.',
    command: 'bash',
    tool_type: 'livelog',
    livelog: {
      source_command: 'bash',
      source_args: ['-c', 'env; sleep 300'],
      detection_prompt: 'Report any line containing PANIC.',
      llm_provider: { base_url: baseUrl, model: 'tiny', api_key: `\${${variable}}` },
      chunk_max_lines: 200,
      chunk_max_seconds: 1,
      cooldown_seconds: 0,
      llm_timeout_seconds: 5,
    },
  };
}

async function writeTool(scope: Scope, definition: Record<string, unknown>): Promise<void> {
  await writeFile(
    join(scope.dir, '.ahma', 'tools', `${String(definition['name'])}.json`),
    JSON.stringify(definition),
  );
}

async function scopeWith(e2e: E2E, env: Record<string, string>): Promise<Scope> {
  const scope = await e2e.scope();
  return { ...scope, env: { ...scope.env, ...env } };
}

/** A finished result, whether the call answered with it or with an operation to await. */
async function finished(server: RunningServer, name: string, args: Record<string, unknown>) {
  const started = await server.call(name, args);
  if (started.structuredContent === undefined) throw new Error(textOf(started));
  const { operation_id } = structured<StartedResult>(started);
  const [result] = structured<Operations>(
    await server.call('await', { ids: [operation_id], timeout_seconds: 30 }),
  ).operations;
  if (result === undefined || result.status === 'running') {
    throw new Error(`${operation_id} did not finish`);
  }
  return result as CommandResult;
}

/**
 * What a sandboxed_shell command sees: `env:` lines (the shell's variables), `proc:` lines (its
 * /proc/self/environ, what it was started with) and `ancestor:` lines (the command lines of the
 * processes between it and the server, to tell a warm shell from a direct spawn).
 */
async function commandView(server: RunningServer): Promise<string> {
  const script = [
    'env | sed "s/^/env:/"',
    'cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/proc:/"',
    `p=$PPID; while [ "$p" -gt 1 ] && [ "$p" != ${String(server.pid)} ]; do ` +
      'echo "ancestor:$(tr "\\0" " " </proc/$p/cmdline)"; p=$(cut -d" " -f4 /proc/$p/stat); done',
  ].join('; ');
  const result = await finished(server, 'sandboxed_shell', { command: script });
  expect(result.exit_code, result.output).toBe(0);
  return result.output;
}

function expectClean(output: string, hidden: Record<string, string>): void {
  for (const [name, value] of Object.entries(hidden)) {
    expect(output, name).not.toContain(value);
    expect(output, name).not.toMatch(new RegExp(`^(env|proc):${name}=`, 'm'));
  }
  for (const [name, value] of Object.entries(ORDINARY)) {
    expect(output).toMatch(new RegExp(`^env:${name}=${value}$`, 'm'));
    expect(output).toMatch(new RegExp(`^proc:${name}=${value}$`, 'm'));
  }
}

const pooled = (output: string) => /^ancestor:.* --pool \d+/m.test(output);

const MODES: [string, string[], boolean][] = [
  ['in a warm shell', [], true],
  ['spawned directly (--no-shell-pool)', ['--no-shell-pool'], false],
];

describe.concurrent('R7.9: secrets never reach commands', { timeout: 60_000 }, () => {
  it.for(MODES)(
    "R7.9: a command %s sees none of Ahma's secrets, no livelog key, nothing --env-deny names; ordinary variables pass",
    async ([, args, warm], { e2e }) => {
      const hidden = secrets();
      const scope = await scopeWith(e2e, { ...hidden, ...ORDINARY });
      await writeTool(scope, livelogTool('watch', 'E2E_LIVELOG_KEY'));
      const server = await e2e.server(scope, [...DENY, ...args]);
      const output = await commandView(server);
      expectClean(output, hidden);
      expect(pooled(output), output).toBe(warm);
    },
  );

  it.for(MODES)(
    'R7.9: hot reload: once a livelog tool naming a new key variable is added, no command %s sees it',
    async ([, args, warm], { e2e }) => {
      const late = `late-key-${uniqueMarker()}`;
      const scope = await scopeWith(e2e, { ...ORDINARY, E2E_LATE_KEY: late });
      const server = await e2e.server(scope, args);
      // Before any tool names it, it is an ordinary variable.
      expect(await commandView(server)).toMatch(new RegExp(`^proc:E2E_LATE_KEY=${late}$`, 'm'));
      await writeTool(scope, livelogTool('late_watch', 'E2E_LATE_KEY'));
      await waitFor(
        async () => (await server.client.listTools()).tools.some((t) => t.name === 'late_watch'),
        'the new livelog tool',
        15_000,
      );
      const output = await commandView(server);
      expectClean(output, { E2E_LATE_KEY: late });
      expect(pooled(output), output).toBe(warm);
    },
  );

  it('R7.9: registered commands and sequence steps run with the same environment as sandboxed_shell', async ({
    e2e,
  }) => {
    const hidden = secrets();
    const scope = await scopeWith(e2e, { ...hidden, ...ORDINARY });
    await writeTool(scope, livelogTool('watch', 'E2E_LIVELOG_KEY'));
    await writeTool(scope, {
      name: 'env_steps',
      description: 'Print the environment in a sequence step.',
      command: 'sequence',
      synchronous: true,
      sequence: [
        { tool: 'sandboxed_shell', args: { command: 'env | sed "s/^/env:/"' } },
        {
          tool: 'sandboxed_shell',
          args: { command: 'cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/proc:/"' },
        },
      ],
    });
    await mkdir(join(scope.dir, 'scripts'));
    await writeFile(
      join(scope.dir, 'scripts', 'show-env.sh'),
      '#!/bin/sh\nenv | sed "s/^/env:/"; cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/proc:/"\n',
      { mode: 0o755 },
    );
    const server = await e2e.server(scope, [...DENY, '--registry']);
    const added = await server.call('add_command', {
      name: 'show_env',
      exec: './scripts/show-env.sh',
      description: 'Print the environment.',
    });
    expect(added.isError, textOf(added)).toBeUndefined();
    const registered = await finished(server, 'show_env', {});
    expect(registered.exit_code, registered.output).toBe(0);
    expectClean(registered.output, hidden);
    const sequence = await finished(server, 'env_steps', {});
    expect(sequence.status, sequence.output).toBe('completed');
    expectClean(sequence.output, hidden);
  });

  it('R7.9: the livelog monitor still sends its key, while its source command does not see it', async ({
    e2e,
  }) => {
    const llm = new LlmServer();
    await llm.start();
    e2e.onCleanup(() => llm.stop());
    const hidden = secrets();
    const scope = await scopeWith(e2e, { ...hidden, ...ORDINARY });
    await writeTool(scope, livelogTool('watch', 'E2E_LIVELOG_KEY', llm.baseUrl));
    const server = await e2e.server(scope, [...DENY, '--inline-wait', '0']);
    const started = await server.call('watch', {});
    expect(started.isError ?? false, textOf(started)).toBe(false);
    const id = structured<StartedResult>(started).operation_id;
    await waitFor(() => llm.requests.length >= 1, 'the first chunk', 15_000);
    expect(llm.requests[0]?.authorization).toBe(`Bearer ${hidden['E2E_LIVELOG_KEY'] ?? ''}`);
    const chunks = llm.requests.map((request) => request.chunk).join('\n');
    expect(chunks).toContain('E2E_ORDINARY=ordinary-value');
    for (const [name, value] of Object.entries(hidden)) expect(chunks, name).not.toContain(value);
    await server.call('cancel', { id });
  });

  it('R7.9: an isolated session: its process gets no HTTP secret, --env-deny is passed on, and its commands see no secret', async ({
    e2e,
  }) => {
    const hidden = secrets();
    const server = await scopeWith(e2e, { ...hidden, ...ORDINARY });
    const project = await e2e.scope();
    await writeTool(project, livelogTool('watch', 'E2E_LIVELOG_KEY'));
    const parsed = parseCommandLine(['--mode', 'http', '--session-isolation', ...DENY], {});
    if (parsed.kind !== 'run') throw new Error('not a server command line');
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
    });
    const session = createIsolatedSession({
      upstream: transport,
      answerInitialize: await e2e.initializeAnswerer(server, DENY),
      defaultScope: server.dir,
      roots: { allowed: ['/var/tmp'], forbidden: [], privatePaths: [] },
      childCommand: isolatedChildCommand(parsed.options, server.dir),
      env: server.env,
      logger: pino({ level: 'silent' }),
      rootsTimeoutMs: 15_000,
    });
    const client = new Client(
      { name: 'ahma-secrets-test', version: '1.0.0' },
      { capabilities: { roots: {} } },
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(project.dir).href }],
    }));
    e2e.onCleanup(async () => {
      await client.close();
      await session.close();
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'), {
        fetch: (url, init) => transport.handleRequest(new Request(url, init)),
      }),
    );
    const script =
      'env | sed "s/^/env:/"; cat /proc/self/environ | tr "\\0" "\\n" | sed "s/^/proc:/"';
    const result = structured<CommandResult>(
      (await client.callTool({
        name: 'sandboxed_shell',
        arguments: { command: script, execution_mode: 'Synchronous' },
      })) as CallToolResult,
    );
    expect(session.scope).toBe(project.dir);
    expectClean(result.output, hidden);
    // The session's own process: no HTTP secret in its environment, --env-deny on its command line.
    const child = (await processes()).find(
      (info) => info.cmdline.includes('--mode stdio') && info.cmdline.includes(project.dir),
    );
    expect(child, 'the session process').toBeDefined();
    expect(child?.cmdline).toContain('--env-deny AWS_*,DB_PASSWOR?');
    const childEnv = await readFile(`/proc/${String(child?.pid)}/environ`, 'utf8');
    expect(childEnv).toContain('E2E_ORDINARY=ordinary-value');
    expect(childEnv).not.toContain(hidden['AHMA_HTTP_TOKEN']);
    expect(childEnv).not.toContain(hidden['AHMA_HTTP_TOKEN_FILE']);
  });

  it('R7.9: a malformed --env-deny entry is refused at start with a clear message', async ({
    e2e,
  }) => {
    const scope = await scopeWith(e2e, {});
    const result = await e2e.run(
      ['--tool_name', 'sandboxed_shell', '--env-deny', 'AWS_*,AWS-KEY', '--', 'true'],
      { cwd: scope.dir, env: scope.env },
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(envDenyProblem('AWS-KEY'));
    expect(envDenyProblem('AWS_*')).toBeUndefined();
  });
});
