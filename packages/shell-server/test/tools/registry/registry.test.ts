// The command registry's management tools (SPEC §8, FR4.1–FR4.9) through the SDK's real Client:
// the real runtime in this process over InMemoryTransport, real files, real executables.
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import { parse } from 'yaml';
import {
  BUILT_INS,
  FIXTURE_TOOLS,
  it,
  PACKAGE_DIR,
  structured,
  textOf,
  type CommandResult,
  type E2E,
  type RunningServer,
  type Scope,
} from '../../support/harness.js';

const REGISTRY_TOOLS = [
  'add_command',
  'remove_command',
  'update_command',
  'list_commands',
  'get_command',
  'batch_exec',
  'import_config',
  'export_config',
  'help',
];
const INSTANT_MCP = join(PACKAGE_DIR, '..', 'core', 'test', 'fixtures', 'instant-mcp');

/** A scope with an executable `scripts/echo-args.sh` printing each argument on its own line. */
async function registryScope(e2e: E2E): Promise<Scope> {
  const scope = await e2e.scope();
  await mkdir(join(scope.dir, 'scripts'));
  await script(scope, 'echo-args.sh', 'for a in "$@"; do printf "[%s]\\n" "$a"; done');
  return scope;
}

async function script(scope: Scope, name: string, body: string): Promise<string> {
  const file = join(scope.dir, 'scripts', name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

async function registryServer(e2e: E2E, scope: Scope, args: readonly string[] = []) {
  const server = await e2e.inProcess(scope, ['--registry', ...args]);
  // The SDK client checks every structuredContent against the tool's outputSchema once it has
  // listed the tools: every answer below is checked so.
  await server.client.listTools();
  let listChanged = 0;
  server.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  return { server, listChanged: () => listChanged };
}

const toolNames = async (server: RunningServer) =>
  (await server.client.listTools()).tools.map((tool) => tool.name);

const registryFile = (scope: Scope) => join(scope.dir, '.ahma', 'registry.json');
const readRegistry = async (scope: Scope) =>
  JSON.parse(await readFile(registryFile(scope), 'utf8')) as {
    version: string;
    commands: Record<string, Record<string, unknown>>;
  };

const echoCommand = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  exec: './scripts/echo-args.sh',
  description: `Echo for ${name}`,
  ...extra,
});

function expectRefused(result: Awaited<ReturnType<RunningServer['call']>>, code: string): string {
  expect(result.isError, textOf(result)).toBe(true);
  expect(textOf(result)).toMatch(new RegExp(`^\\[${code}\\]`));
  return textOf(result);
}

describe.concurrent('the management tools', { timeout: 60_000 }, () => {
  it('FR4.9: --registry adds the nine management tools after the built-ins, each with an example; without it none is listed', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      ...BUILT_INS,
      ...REGISTRY_TOOLS,
      ...FIXTURE_TOOLS,
    ]);
    // NFR3.3: each management tool's description carries an example call.
    for (const tool of tools.filter((t) => REGISTRY_TOOLS.includes(t.name))) {
      expect(tool.description, tool.name).toMatch(/Example: \{/);
      // SPEC §3: like every tool, the answer or a refusal's {error: {code, message}}.
      expect(tool.outputSchema?.['anyOf'], tool.name).toContainEqual({ required: ['error'] });
    }
    const plain = await e2e.inProcess(scope);
    expect(await toolNames(plain)).toEqual([...BUILT_INS, ...FIXTURE_TOOLS]);
  });

  it('NFR3.2: help is a complete guide: every tool, every field, with examples, and the registry file', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    const text = textOf(await server.call('help'));
    for (const name of REGISTRY_TOOLS) expect(text).toContain(name);
    for (const field of ['exec', 'args', 'description', 'async', 'timeout', 'flag', 'format']) {
      expect(text).toContain(field);
    }
    expect(text).toContain(registryFile(scope));
    expect(text).toMatch(/add_command \{"name": "greet"/);
  });

  it('FR4.1: an agent registers a script and calls it within two tool calls; tools/list_changed comes first', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server, listChanged } = await registryServer(e2e, scope);
    const added = await server.call('add_command', {
      name: 'greet',
      exec: './scripts/echo-args.sh',
      description: 'Greet someone',
      args: { who: { type: 'string', required: true }, times: { type: 'integer' } },
    });
    expect(added.isError, textOf(added)).toBeUndefined();
    expect(textOf(added)).toContain('it is now the tool greet {"who": …, "times": …}');
    // The notification was sent before the answer, so it has arrived by now.
    expect(listChanged()).toBe(1);
    const called = structured<CommandResult>(
      await server.call('greet', { who: 'world', times: 2 }),
    );
    expect(called).toMatchObject({ tool: 'greet', status: 'completed', exit_code: 0 });
    expect(called.output).toBe('[world]\n[2]\n');
    const tool = (await server.client.listTools()).tools.find((t) => t.name === 'greet');
    expect(tool?.description).toContain('Greet someone');
    expect(Object.keys(tool?.inputSchema.properties ?? {}).slice(0, 2)).toEqual(['who', 'times']);
    expect(tool?.inputSchema.required).toEqual(['who']);
  });

  it('FR4.1: the description is optional (instant-mcp); the tool and list_commands fall back to the exec, and null unsets one', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    const added = await server.call('add_command', {
      name: 'bare',
      exec: './scripts/echo-args.sh',
    });
    expect(added.isError, textOf(added)).toBeUndefined();
    expect(textOf(added)).toContain(
      'no description, so its tool says "Runs ./scripts/echo-args.sh."',
    );
    const described = async () =>
      (await server.client.listTools()).tools.find((t) => t.name === 'bare')?.description;
    expect(await described()).toMatch(/^Runs \.\/scripts\/echo-args\.sh\.\n\n/);
    expect(textOf(await server.call('list_commands'))).toContain('- bare: ./scripts/echo-args.sh');
    expect((await readRegistry(scope)).commands['bare']).toEqual({
      name: 'bare',
      exec: './scripts/echo-args.sh',
    });

    await server.call('update_command', { name: 'bare', description: 'Echo' });
    expect(await described()).toMatch(/^Echo\n\n/);
    const unset = await server.call('update_command', { name: 'bare', description: null });
    expect(unset.isError, textOf(unset)).toBeUndefined();
    expect(await described()).toMatch(/^Runs /);
  });

  it('FR4.1: a name, an exec and a timeout are checked; nothing is registered when one fails', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server, listChanged } = await registryServer(e2e, scope);
    expect(
      expectRefused(await server.call('add_command', echoCommand('bad-name')), 'ARGUMENTS_INVALID'),
    ).toContain('argument "name"');
    // The schema says so first; core says so too, for every other way in (batch_exec, import).
    const batch = await server.call('batch_exec', {
      commands: [{ operation: 'add_command', params: echoCommand('123') }],
    });
    expect(textOf(batch)).toContain('not a command name');
    expect(
      expectRefused(
        await server.call('add_command', echoCommand('slowish', { timeout: '10 minutes' })),
        'COMMAND_INVALID',
      ),
    ).toContain('"30s", "5m", "1h"');
    const missing = await server.call('add_command', { name: 'x', description: 'no exec' });
    expect(expectRefused(missing, 'ARGUMENTS_INVALID')).toContain('exec');
    expect(listChanged()).toBe(0);
    await expect(readFile(registryFile(scope))).rejects.toThrow(/ENOENT/);
  });

  it('FR6.2: exec must exist and be executable: absolute, relative to the scope, or on PATH', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    expect(
      expectRefused(
        await server.call('add_command', echoCommand('gone', { exec: './scripts/none.sh' })),
        'EXEC_NOT_FOUND',
      ),
    ).toContain(`${scope.dir}/scripts/none.sh does not exist`);
    await writeFile(join(scope.dir, 'scripts', 'plain.sh'), 'echo hi\n');
    expect(
      expectRefused(
        await server.call('add_command', echoCommand('plain', { exec: 'scripts/plain.sh' })),
        'EXEC_NOT_FOUND',
      ),
    ).toContain('is not executable');
    expect(
      expectRefused(
        await server.call('add_command', echoCommand('bare', { exec: 'echo-args.sh' })),
        'EXEC_NOT_FOUND',
      ),
    ).toContain('no executable of that name on PATH');
    for (const exec of ['wc', '/usr/bin/wc', join(scope.dir, 'scripts', 'echo-args.sh')]) {
      const name = `ok_${String(exec.length)}`;
      const result = await server.call('add_command', echoCommand(name, { exec }));
      expect(result.isError, textOf(result)).toBeUndefined();
    }
  });

  it('EC5: a name already taken — registered, built-in or from a tool file — is refused; a duplicate suggests update_command', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    await server.call('add_command', echoCommand('twice'));
    expect(
      expectRefused(await server.call('add_command', echoCommand('twice')), 'COMMAND_EXISTS'),
    ).toContain('use update_command');
    expect(
      expectRefused(await server.call('add_command', echoCommand('status')), 'COMMAND_EXISTS'),
    ).toContain('built-in tool');
    expect(
      expectRefused(await server.call('add_command', echoCommand('help')), 'COMMAND_EXISTS'),
    ).toContain('built-in tool');
    expect(
      expectRefused(await server.call('add_command', echoCommand('argv')), 'COMMAND_EXISTS'),
    ).toContain('argv.json');
  });

  it('FR4.2: remove_command takes the tool away at once; an unknown name gets the closest one', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server, listChanged } = await registryServer(e2e, scope);
    await server.call('add_command', echoCommand('lint'));
    expect(await toolNames(server)).toContain('lint');
    expect(
      expectRefused(await server.call('remove_command', { name: 'lnt' }), 'COMMAND_UNKNOWN'),
    ).toContain('did you mean "lint"?');
    const removed = await server.call('remove_command', { name: 'lint' });
    expect(textOf(removed)).toBe('Removed "lint".');
    expect(listChanged()).toBe(2);
    expect(await toolNames(server)).not.toContain('lint');
    expect((await readRegistry(scope)).commands).toEqual({});
    await expect(server.call('lint')).rejects.toThrow(/unknown tool "lint"/);
  });

  it('FR4.3: update_command replaces the given fields (args as a whole), null unsets one, and the tool changes at once', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server, listChanged } = await registryServer(e2e, scope);
    await server.call(
      'add_command',
      echoCommand('tidy', {
        args: { a: { type: 'string' }, b: { type: 'string' } },
        timeout: '5m',
      }),
    );
    const updated = await server.call('update_command', {
      name: 'tidy',
      args: { only: { type: 'boolean', flag: '--only' } },
      timeout: null,
      async: true,
    });
    expect(updated.isError, textOf(updated)).toBeUndefined();
    expect(listChanged()).toBe(2);
    expect((await readRegistry(scope)).commands['tidy']).toEqual({
      name: 'tidy',
      exec: './scripts/echo-args.sh',
      args: { only: { type: 'boolean', flag: '--only' } },
      description: 'Echo for tidy',
      async: true,
    });
    const tool = (await server.client.listTools()).tools.find((t) => t.name === 'tidy');
    expect(Object.keys(tool?.inputSchema.properties ?? {})[0]).toBe('only');
    const result = await server.call('tidy', { only: true, execution_mode: 'Synchronous' });
    expect(structured<CommandResult>(result).output).toBe('[--only]\n');
    expect(
      expectRefused(
        await server.call('update_command', { name: 'tidy', exec: './scripts/none.sh' }),
        'EXEC_NOT_FOUND',
      ),
    ).toContain('none.sh');
  });

  it('FR4.4, FR4.5: list_commands and get_command show the commands as stored', async ({ e2e }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    expect(textOf(await server.call('list_commands'))).toContain('No commands registered');
    const spec = echoCommand('show', {
      args: { file: { type: 'string', format: 'path', description: 'A file' } },
      timeout: '30s',
    });
    await server.call('add_command', spec);
    const listed = structured<{ file: string; commands: unknown[]; rejected: unknown[] }>(
      await server.call('list_commands'),
    );
    expect(listed).toEqual({
      file: registryFile(scope),
      commands: [spec],
      rejected: [],
      notices: [],
    });
    expect(structured(await server.call('get_command', { name: 'show' }))).toEqual({
      command: spec,
    });
    expectRefused(await server.call('get_command', { name: 'nope' }), 'COMMAND_UNKNOWN');
  });

  it('FR4.6, EC6: an atomic batch is all or nothing (one write); a non-atomic one keeps what succeeded, with one result per operation', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server, listChanged } = await registryServer(e2e, scope);
    await server.call('add_command', echoCommand('keep'));
    const before = await readFile(registryFile(scope), 'utf8');
    const operations = [
      { operation: 'add_command', params: echoCommand('one') },
      { operation: 'update_command', params: { name: 'keep', timeout: '1m' } },
      { operation: 'remove_command', params: { name: 'absent' } },
      { operation: 'add_command', params: echoCommand('two') },
    ];
    const atomic = await server.call('batch_exec', { commands: operations });
    expect(atomic.isError).toBe(true);
    const rolledBack = structured<{ rolledBack: boolean; results: { success: boolean }[] }>(atomic);
    expect(rolledBack.rolledBack).toBe(true);
    expect(rolledBack.results.map((r) => r.success)).toEqual([true, true, false]);
    expect(textOf(atomic)).toContain('Nothing changed: operation 2 (remove_command) failed');
    expect(await readFile(registryFile(scope), 'utf8')).toBe(before);
    expect(await toolNames(server)).not.toContain('one');
    expect(listChanged()).toBe(1);

    const partial = await server.call('batch_exec', { commands: operations, atomic: false });
    const results = structured<{ success: boolean; results: Record<string, unknown>[] }>(partial);
    expect(results.success).toBe(false);
    expect(results.results).toMatchObject([
      { index: 0, operation: 'add_command', name: 'one', success: true },
      { index: 1, operation: 'update_command', name: 'keep', success: true },
      {
        index: 2,
        operation: 'remove_command',
        name: 'absent',
        success: false,
        error: { code: 'COMMAND_UNKNOWN' },
      },
      { index: 3, operation: 'add_command', name: 'two', success: true },
    ]);
    expect(Object.keys((await readRegistry(scope)).commands)).toEqual(['keep', 'one', 'two']);
    expect((await readRegistry(scope)).commands['keep']?.['timeout']).toBe('1m');
    expect(listChanged()).toBe(2);

    const ok = await server.call('batch_exec', {
      commands: [{ operation: 'remove_command', params: { name: 'one' } }],
    });
    expect(ok.isError, textOf(ok)).toBeUndefined();
    expect(textOf(ok)).toContain('1/1 operations succeeded');
  });

  it("FR4.7, EC7: instant-mcp's state file and YAML export import as they are; duplicates are skipped unless overwrite; bad entries are reported", async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    await script(scope, 'greet.sh', 'echo "hello $1"');
    await copyFile(join(INSTANT_MCP, 'state.json'), join(scope.dir, 'state.json'));
    await copyFile(join(INSTANT_MCP, 'commands.yaml'), join(scope.dir, 'commands.yaml'));
    const { server, listChanged } = await registryServer(e2e, scope);

    const fromState = await server.call('import_config', { path: 'state.json' });
    expect(structured(fromState)).toMatchObject({
      counts: { imported: 2, skipped: 0, errors: 0 },
      imported: ['count_lines', 'greet'],
    });
    expect(listChanged()).toBe(1);
    const greet = structured<CommandResult>(
      await server.call('greet', { name: 'ada', execution_mode: 'Synchronous' }),
    );
    expect(greet.output).toBe('hello ada\n');

    const fromYaml = await server.call('import_config', { path: join(scope.dir, 'commands.yaml') });
    expect(structured(fromYaml)).toMatchObject({
      counts: { imported: 1, skipped: 2, errors: 0 },
      imported: ['lint'],
      skipped: ['count_lines', 'greet'],
    });
    expect(textOf(fromYaml)).toContain('Imported 1, skipped 2');
    const overwrite = await server.call('import_config', {
      path: 'commands.yaml',
      overwrite: true,
    });
    expect(structured(overwrite)).toMatchObject({ counts: { imported: 3, skipped: 0 } });
    // instant-mcp's export writes every field; its empty ones ("", false, {}) mean unset.
    expect((await readRegistry(scope)).commands['lint']).toEqual({
      name: 'lint',
      exec: './scripts/greet.sh',
      timeout: '120s',
    });

    await writeFile(
      join(scope.dir, 'broken.yaml'),
      'commands:\n  fine:\n    exec: wc\n    description: ok\n  gone:\n    exec: ./nowhere\n  bad:\n    exec: wc\n    timeout: soon\n',
    );
    const mixed = await server.call('import_config', { path: 'broken.yaml' });
    expect(structured(mixed)).toMatchObject({ counts: { imported: 1, errors: 2 } });
    expect(textOf(mixed)).toMatch(/- gone: \[EXEC_NOT_FOUND\]/);
    expect(textOf(mixed)).toMatch(/- bad: \[COMMAND_INVALID\]/);
    expectRefused(await server.call('import_config', { path: 'nothing.yaml' }), 'CONFIG_INVALID');
  });

  it('FR4.8: export_config writes YAML (by default .ahma/commands.yaml) that imports back every field; outside the scope is refused', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    const commands = [
      echoCommand('first', {
        args: {
          target: { type: 'string', format: 'path', required: true, description: 'Where' },
          depth: { type: 'integer', flag: '--depth' },
          dry: { type: 'boolean', flag: '-n' },
          ratio: { type: 'number' },
        },
        async: true,
        timeout: '1h30m',
      }),
      { name: 'second', exec: 'wc', description: 'Count' },
    ];
    for (const command of commands) await server.call('add_command', command);
    const exported = await server.call('export_config');
    const path = join(scope.dir, '.ahma', 'commands.yaml');
    expect(textOf(exported)).toBe(`Exported 2 command(s) to ${path}.`);
    const yaml = parse(await readFile(path, 'utf8')) as { commands: Record<string, unknown> };
    expect(yaml.commands).toEqual({ first: commands[0], second: commands[1] });

    await server.call('batch_exec', {
      commands: commands.map((c) => ({ operation: 'remove_command', params: { name: c.name } })),
    });
    await server.call('import_config', { path: '.ahma/commands.yaml' });
    expect(
      structured<{ commands: unknown[] }>(await server.call('list_commands')).commands,
    ).toEqual(commands);
    const outside = await e2e.outsideDir();
    expectRefused(
      await server.call('export_config', { path: join(outside, 'x.yaml') }),
      'PATH_OUTSIDE_SCOPE',
    );
  });
});

describe.concurrent('the registry file', { timeout: 60_000 }, () => {
  it("FR5: every change is in the file before the call answers, in instant-mcp's format, and a new server serves it", async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    await server.call('add_command', echoCommand('persisted', { args: { x: { type: 'string' } } }));
    expect(await readRegistry(scope)).toEqual({
      version: '1.0',
      commands: {
        persisted: {
          name: 'persisted',
          exec: './scripts/echo-args.sh',
          args: { x: { type: 'string' } },
          description: 'Echo for persisted',
        },
      },
    });
    await server.close();
    const { server: again } = await registryServer(e2e, scope);
    const result = structured<CommandResult>(await again.call('persisted', { x: 'back' }));
    expect(result.output).toBe('[back]\n');
  });

  it('FR5: --registry-file and AHMA_REGISTRY_FILE choose the file (relative to where the server starts); either turns the registry on', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const byFlag = await e2e.inProcess(scope, ['--registry-file', 'custom/reg.json']);
    await byFlag.call('add_command', echoCommand('flagged'));
    const custom = JSON.parse(await readFile(join(scope.dir, 'custom', 'reg.json'), 'utf8')) as {
      commands: object;
    };
    expect(Object.keys(custom.commands)).toEqual(['flagged']);
    const byEnv = await e2e.inProcess(
      {
        ...scope,
        env: { ...scope.env, AHMA_REGISTRY_FILE: join(scope.dir, 'custom', 'reg.json') },
      },
      [],
    );
    expect(await toolNames(byEnv)).toContain('flagged');
    const enabled = await e2e.inProcess({ ...scope, env: { ...scope.env, AHMA_REGISTRY: '1' } });
    expect(await toolNames(enabled)).toContain('add_command');
  });

  it('EC4: a corrupt registry file is moved aside, reported in list_commands and help, and the server starts empty', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    await mkdir(join(scope.dir, '.ahma'), { recursive: true });
    await writeFile(registryFile(scope), '{"version": "1.0", "commands": {"half');
    const { server } = await registryServer(e2e, scope);
    const listed = structured<{ commands: unknown[]; notices: { backup: string }[] }>(
      await server.call('list_commands'),
    );
    expect(listed.commands).toEqual([]);
    const backup = listed.notices[0]?.backup ?? '';
    expect(backup).toMatch(/registry\.json\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d/);
    expect(await readFile(backup, 'utf8')).toBe('{"version": "1.0", "commands": {"half');
    expect(textOf(await server.call('list_commands'))).toContain(`moved to ${backup}`);
    expect(textOf(await server.call('help'))).toContain(`moved to ${backup}`);
    await server.call('add_command', echoCommand('fresh'));
    expect(Object.keys((await readRegistry(scope)).commands)).toEqual(['fresh']);
  });

  it('SPEC §8: an entry that is not a valid command is kept in the file, reported, and not served; update_command repairs it', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    await mkdir(join(scope.dir, '.ahma'), { recursive: true });
    const broken = { name: 'broken', exec: './scripts/echo-args.sh', timeout: 'later' };
    await writeFile(
      registryFile(scope),
      JSON.stringify({ version: '1.0', commands: { broken, argv: echoCommand('argv') } }),
    );
    const { server } = await registryServer(e2e, scope);
    const listed = structured<{
      commands: { name: string; shadowedBy?: string }[];
      rejected: { name: string; problem: string }[];
    }>(await server.call('list_commands'));
    expect(listed.rejected.map((r) => r.name)).toEqual(['broken']);
    expect(listed.rejected[0]?.problem).toContain('timeout "later"');
    // A registered command whose name a tool file took is listed but not served.
    expect(listed.commands[0]?.shadowedBy).toContain('argv.json');
    const names = await toolNames(server);
    expect(names).not.toContain('broken');
    expect(names.filter((n) => n === 'argv')).toHaveLength(1);
    await server.call('add_command', echoCommand('other'));
    expect((await readRegistry(scope)).commands['broken']).toEqual(broken);
    const repaired = await server.call('update_command', { name: 'broken', timeout: '10s' });
    expect(repaired.isError, textOf(repaired)).toBeUndefined();
    expect(await toolNames(server)).toContain('broken');
  });

  it('EC1: concurrent changes from one client are serialised and none is lost', async ({ e2e }) => {
    const scope = await registryScope(e2e);
    const { server } = await registryServer(e2e, scope);
    const names = Array.from({ length: 25 }, (_, i) => `c${String(i)}`);
    const results = await Promise.all(names.map((n) => server.call('add_command', echoCommand(n))));
    expect(results.filter((r) => r.isError === true)).toEqual([]);
    expect(Object.keys((await readRegistry(scope)).commands).sort()).toEqual([...names].sort());
    const listed = await toolNames(server);
    for (const name of names) expect(listed).toContain(name);
  });
});
