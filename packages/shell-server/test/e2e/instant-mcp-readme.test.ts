// SPEC §8 compatibility with instant-mcp: every tool call instant-mcp's own README shows
// (test/fixtures/instant-mcp-readme, with its source) replayed as it is — the fixture's arguments
// object goes to the server untouched — against the built `ahma-shell --registry`, over stdio,
// through the MCP SDK client. What the README takes for granted (its scripts) is created here.
import { readFileSync } from 'node:fs';
import { chmod, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, type TestContext } from 'vitest';
import { parse } from 'yaml';
import {
  E2E,
  FIXTURES,
  structured,
  textOf,
  type CommandResult,
  type RunningServer,
  type Scope,
} from '../support/harness.js';

interface Example {
  readonly id: string;
  readonly section: string;
  /** How the README shows it: a JSON block, prose, or a row of its tool table. */
  readonly shown: 'json' | 'prose' | 'table';
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
}

const FIXTURE = join(FIXTURES, 'instant-mcp-readme', 'examples.json');
const { examples } = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { examples: Example[] };

/** Which test replays which examples; one test checks that together they are all of them. */
const REPLAYS = {
  basicUsage: ['basic-usage-add', 'basic-usage-call'],
  singleCommand: ['single-command'],
  batchSetup: ['batch-setup'],
  versionControl: ['batch-setup', 'version-control-export', 'version-control-import'],
  coreTools: [
    'core-tools-help',
    'basic-usage-add',
    'core-tools-list',
    'core-tools-get',
    'core-tools-remove',
  ],
} as const;

/** The scripts the README's examples name: each prints its name and its arguments, one a line. */
const SCRIPTS = ['analyze-logs.sh', 'lint.sh', 'test.sh', 'deploy.sh'];

/** A fresh E2E for one concurrent test, cleaned up when it ends. */
function setup(context: TestContext): E2E {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return e2e;
}

async function readmeScope(e2e: E2E): Promise<Scope> {
  const scope = await e2e.scope({ noTools: true });
  await mkdir(join(scope.dir, 'scripts'));
  for (const name of SCRIPTS) {
    const file = join(scope.dir, 'scripts', name);
    await writeFile(
      file,
      `#!/bin/sh\necho ${name}\nfor a in "$@"; do printf '[%s]\\n' "$a"; done\n`,
    );
    await chmod(file, 0o755);
  }
  return scope;
}

async function registryServer(e2e: E2E, scope: Scope): Promise<RunningServer> {
  const server = await e2e.server(scope, ['--registry']);
  // Listed once, so the SDK client checks every structuredContent against its outputSchema.
  await server.client.listTools();
  return server;
}

/**
 * Calls an example on `server` exactly as the fixture holds it; only the examples the test declared
 * in REPLAYS, so the coverage check below is about what the tests really replay.
 */
function replayer(server: RunningServer, declared: readonly string[]) {
  return (id: string): Promise<CallToolResult> => {
    const example = examples.find((e) => e.id === id);
    if (example === undefined || !declared.includes(id)) {
      throw new Error(`example "${id}" is not in ${FIXTURE} or not declared in REPLAYS`);
    }
    return server.call(example.tool, example.arguments);
  };
}

function expectOk(result: CallToolResult): CallToolResult {
  expect(result.isError, textOf(result)).toBeFalsy();
  return result;
}

const toolDescription = async (server: RunningServer, name: string) =>
  (await server.client.listTools()).tools.find((t) => t.name === name)?.description;

describe.concurrent(
  "instant-mcp's README examples, replayed as they are",
  { timeout: 60_000 },
  () => {
    it('SPEC §8 compat: the fixture holds every example, and the tests below replay each one', () => {
      const replayed = new Set(Object.values(REPLAYS).flat());
      expect([...replayed].sort()).toEqual(examples.map((e) => e.id).sort());
      for (const example of examples) {
        expect(example.arguments, example.id).toBeTypeOf('object');
      }
    });

    it('SPEC §8 compat, FR4.1: Basic Usage registers analyze_logs and calls it with its log_file', async (context) => {
      const e2e = setup(context);
      const scope = await readmeScope(e2e);
      const server = await registryServer(e2e, scope);
      const replay = replayer(server, REPLAYS.basicUsage);
      const added = expectOk(await replay('basic-usage-add'));
      expect(textOf(added)).toContain('it is now the tool analyze_logs {"log_file": …}');
      expect(await toolDescription(server, 'analyze_logs')).toMatch(
        /^Analyzes application logs for errors\n/,
      );
      const called = structured<CommandResult>(expectOk(await replay('basic-usage-call')));
      expect(called).toMatchObject({ tool: 'analyze_logs', status: 'completed', exit_code: 0 });
      // The value reaches the script as one argv element, exactly as given.
      expect(called.output).toBe('analyze-logs.sh\n[/var/log/app.log]\n');
    });

    it('SPEC §8 compat, FR4.1: Single Command registers git_summary with "async": false and "timeout": "10s"', async (context) => {
      const e2e = setup(context);
      const scope = await readmeScope(e2e);
      const server = await registryServer(e2e, scope);
      const replay = replayer(server, REPLAYS.singleCommand);
      expectOk(await replay('single-command'));
      const got = structured<{ command: Record<string, unknown> }>(
        expectOk(await server.call('get_command', { name: 'git_summary' })),
      );
      // "async": false is instant-mcp's "unset", so it is not stored.
      expect(got.command).toEqual({
        name: 'git_summary',
        exec: 'git',
        args: { repo_path: { type: 'string', required: true } },
        description: 'Get git repository summary',
        timeout: '10s',
      });
      const tool = (await server.client.listTools()).tools.find((t) => t.name === 'git_summary');
      expect(tool?.inputSchema.required).toEqual(['repo_path']);
    });

    it('SPEC §8 compat, FR4.6: Batch Setup adds lint, test and deploy without descriptions, atomically; each falls back to its exec', async (context) => {
      const e2e = setup(context);
      const scope = await readmeScope(e2e);
      const server = await registryServer(e2e, scope);
      const replay = replayer(server, REPLAYS.batchSetup);
      const batch = expectOk(await replay('batch-setup'));
      expect(structured(batch)).toEqual({
        success: true,
        atomic: true,
        rolledBack: false,
        results: ['lint', 'test', 'deploy'].map((name, index) => ({
          index,
          operation: 'add_command',
          name,
          success: true,
        })),
      });
      // FR4.4: list_commands shows the exec where there is no description; the tool says it runs it.
      const listing = textOf(expectOk(await server.call('list_commands', {})));
      for (const name of ['lint', 'test', 'deploy']) {
        expect(listing).toContain(`- ${name}: ./scripts/${name}.sh`);
        expect(await toolDescription(server, name)).toMatch(
          new RegExp(`^Runs \\./scripts/${name}\\.sh\\.\\n`),
        );
      }
      const lint = structured<CommandResult>(expectOk(await server.call('lint', {})));
      expect(lint.output).toBe('lint.sh\n');
    });

    it('SPEC §8 compat, FR4.7, FR4.8: Version Control Workflow exports to .instant-mcp/commands.yaml and imports it on another machine', async (context) => {
      const e2e = setup(context);
      const scope = await readmeScope(e2e);
      const server = await registryServer(e2e, scope);
      const replay = replayer(server, REPLAYS.versionControl);
      expectOk(await replay('batch-setup'));
      const exported = expectOk(await replay('version-control-export'));
      const file = join(scope.dir, '.instant-mcp', 'commands.yaml');
      expect(structured(exported)).toEqual({ path: file, exported: ['lint', 'test', 'deploy'] });
      expect(parse(await readFile(file, 'utf8'))).toEqual({
        commands: {
          lint: { name: 'lint', exec: './scripts/lint.sh' },
          test: { name: 'test', exec: './scripts/test.sh' },
          deploy: { name: 'deploy', exec: './scripts/deploy.sh' },
        },
      });

      // The new machine: a clone of the repository (its scripts and the committed file), no registry.
      const clone = await e2e.scope({ noTools: true });
      await cp(join(scope.dir, 'scripts'), join(clone.dir, 'scripts'), { recursive: true });
      await cp(join(scope.dir, '.instant-mcp'), join(clone.dir, '.instant-mcp'), {
        recursive: true,
      });
      const other = await registryServer(e2e, clone);
      const replayOther = replayer(other, REPLAYS.versionControl);
      const imported = expectOk(await replayOther('version-control-import'));
      expect(structured(imported)).toMatchObject({
        counts: { imported: 3, skipped: 0, errors: 0 },
        imported: ['lint', 'test', 'deploy'],
      });
      const deploy = structured<CommandResult>(expectOk(await other.call('deploy', {})));
      expect(deploy.output).toBe('deploy.sh\n');
    });

    it('SPEC §8 compat, FR4.2, FR4.4, FR4.5, FR4.9: the Core Tools table: help, list_commands, get_command, remove_command', async (context) => {
      const e2e = setup(context);
      const scope = await readmeScope(e2e);
      const server = await registryServer(e2e, scope);
      const replay = replayer(server, REPLAYS.coreTools);
      expect(textOf(expectOk(await replay('core-tools-help')))).toContain(
        '# Registering your own commands as tools',
      );
      expectOk(await replay('basic-usage-add'));
      expect(textOf(expectOk(await replay('core-tools-list')))).toContain(
        '- analyze_logs: Analyzes application logs for errors',
      );
      const got = structured<{ command: { name: string } }>(
        expectOk(await replay('core-tools-get')),
      );
      expect(got.command.name).toBe('analyze_logs');
      expectOk(await replay('core-tools-remove'));
      expect(textOf(expectOk(await replay('core-tools-list')))).toContain(
        'No commands registered.',
      );
      expect(await toolDescription(server, 'analyze_logs')).toBeUndefined();
    });
  },
);
