// tools/list over stdio with the SDK's Client: built-ins first, then the definitions in a
// deterministic order, each with an inputSchema and an outputSchema; invalid files are skipped
// and named in the log (R5.2).
import { describe, expect } from 'vitest';
import { BUILT_INS, FIXTURE_TOOLS, it, readLog } from '../support/harness.js';

describe.concurrent('tools/list', { timeout: 60_000 }, () => {
  it('SPEC §3: lists sandboxed_shell, status, await, cancel and activate_tools first, then the definitions by definition name and declared leaf order', async ({
    e2e,
  }) => {
    const scope = await e2e.scope();
    const server = await e2e.inProcess(scope);
    const { tools } = await server.client.listTools();
    // File names (a-fails.json, zz-argv.json) deliberately disagree with the definition names.
    expect(tools.map((tool) => tool.name)).toEqual([...BUILT_INS, ...FIXTURE_TOOLS]);
    // Deterministic: the same list again, and from a second server on the same definitions.
    expect((await server.client.listTools()).tools).toEqual(tools);
    const again = await e2e.inProcess(await e2e.scope());
    expect((await again.client.listTools()).tools.map((tool) => tool.name)).toEqual(
      tools.map((tool) => tool.name),
    );
  });

  it('SPEC §3: every tool has a description, an object inputSchema and an object outputSchema', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const { tools } = await server.client.listTools();
    for (const tool of tools) {
      expect(tool.description, tool.name).toEqual(expect.stringMatching(/\S/));
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // Each result shape is one branch of anyOf; the other is a refusal's {error: {code, message}}.
    const required = (name: string) => byName.get(name)?.outputSchema?.['anyOf'];
    // Command tools declare the finished-result shape; status and await a list of them.
    for (const name of ['sandboxed_shell', 'cancel', ...FIXTURE_TOOLS]) {
      expect(required(name), name).toEqual([
        { required: ['operation_id', 'tool', 'status'] },
        { required: ['error'] },
      ]);
    }
    for (const name of ['status', 'await']) {
      expect(required(name), name).toEqual([{ required: ['operations'] }, { required: ['error'] }]);
    }
    expect(required('activate_tools')).toEqual([{ required: ['action'] }, { required: ['error'] }]);
    expect(required('output')).toEqual([
      { required: ['id', 'tool', 'status', 'running', 'source', 'mode', 'text'] },
      { required: ['error'] },
    ]);
  });

  it('SPEC §3: inputSchemas come from the definitions: properties, required, path format and the meta-parameters', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const { tools } = await server.client.listTools();
    const schema = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    expect(schema('sandboxed_shell')).toMatchObject({
      required: ['command'],
      properties: {
        command: { type: 'string' },
        working_directory: { type: 'string' },
        timeout_seconds: { type: 'number' },
      },
      additionalProperties: false,
    });
    expect(schema('files_show')).toMatchObject({
      required: ['path'],
      properties: {
        path: { type: 'string', format: 'path' },
        working_directory: { type: 'string' },
      },
      additionalProperties: false,
    });
    expect(schema('e2e_sync')).toMatchObject({ properties: { value: { type: 'string' } } });
    expect(schema('e2e_sync')?.required).toBeUndefined();
    expect(schema('argv')).toMatchObject({
      properties: { words: { type: 'array', items: { type: 'string' } } },
    });
    expect(schema('cancel')).toMatchObject({ required: ['id'] });
  });

  it('R2.1: asynchronous tools carry the guidance to keep working while the result is pushed; synchronous ones do not', async ({
    e2e,
  }) => {
    const server = await e2e.inProcess(await e2e.scope());
    const { tools } = await server.client.listTools();
    const description = (name: string) =>
      tools.find((tool) => tool.name === name)?.description ?? '';
    const guidance = description('sandboxed_shell').split('\n\n')[0] ?? '';
    expect(guidance).toMatch(/operation_id/);
    expect(description('e2e_async').startsWith(guidance)).toBe(true);
    expect(description('e2e_async')).toContain('Asynchronous echo.');
    expect(description('e2e_sync')).not.toContain(guidance);
  });

  it('SPEC §3: the server declares tools.listChanged and names itself', async ({ e2e }) => {
    const server = await e2e.inProcess(await e2e.scope());
    expect(server.client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(server.client.getServerVersion()?.name).toBe('ahma');
  });

  it('R5.2: an invalid tool file is skipped, the other files are listed, and the log file names it', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ invalid: true });
    const server = await e2e.inProcess(scope);
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...BUILT_INS, ...FIXTURE_TOOLS]);
    await server.close();
    const log = await readLog(scope);
    const rejected = log.lines.filter((line) => String(line['msg']).includes('typo.json'));
    expect(rejected.length, log.text).toBeGreaterThan(0);
    // File, JSON pointer and the fix hint all reach the log.
    expect(rejected[0]).toMatchObject({ level: 40, pointer: '/subcommand/0/synchronus' });
    expect(String(rejected[0]?.['msg'])).toMatch(
      /typo\.json#\/subcommand\/0\/synchronus: unknown key "synchronus".*did you mean "synchronous"/,
    );
  });

  it('R5.2: a tools directory holding only an invalid file still serves the built-ins', async ({
    e2e,
  }) => {
    const scope = await e2e.scope({ noTools: true, invalid: true });
    const server = await e2e.inProcess(scope);
    expect((await server.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      ...BUILT_INS,
    ]);
  });
});
