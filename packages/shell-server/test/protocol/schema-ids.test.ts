// Output schemas as tools/list shows them (SPEC §3, src/protocol/schema-ids.ts; issue 28, gap 11).
// Each has an `$id` made from its content. The SDK v1 client compiles a validator for every
// listed output schema at every listing unless its Ajv already knows the schema's `$id`, so
// with the ids it compiles each one once. Tested with the real SDK v1 client over the binary's
// stdio. Its validator is the SDK's own; the test only counts what that validator compiles and
// checks. The v2 client pinned to 2026-07-28 covers the other era.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation';
import { describe, expect, it, type TestContext } from 'vitest';
import { SCHEMA_ID_PREFIX, withSchemaId } from '../../src/protocol/schema-ids.js';
import { BIN, E2E, structured, type CommandResult, type Scope } from '../support/harness.js';
import { modernStdioClient } from '../support/modern-client.js';

/** Many tools (the bundles and the fixture tool files) over a few distinct output schemas. */
const BUNDLES = ['--tools', 'git,file-tools'];
const ID = new RegExp(`^${SCHEMA_ID_PREFIX}[0-9a-f]{64}$`);

/** The SDK's own Ajv validator, counting the schemas it compiles and the values it checks. */
class CountingValidator implements jsonSchemaValidator {
  compiled = 0;
  checked = 0;
  readonly #sdk = new AjvJsonSchemaValidator();
  /** The SDK's Ajv instance (a private field of its provider): what the client caches in. */
  readonly ajv = (this.#sdk as unknown as { _ajv: Compiler })._ajv;

  constructor() {
    const compile = this.ajv.compile.bind(this.ajv);
    this.ajv.compile = (schema) => {
      this.compiled += 1;
      return compile(schema);
    };
  }

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = this.#sdk.getValidator<T>(schema);
    return (input) => {
      this.checked += 1;
      return check(input);
    };
  }
}

interface Compiler {
  compile(schema: object): unknown;
  getSchema(id: string): unknown;
}

async function setup(context: TestContext): Promise<{ e2e: E2E; scope: Scope }> {
  const e2e = new E2E();
  context.onTestFinished(() => e2e.cleanup());
  return { e2e, scope: await e2e.scope() };
}

/** The SDK v1 client over `ahma-shell --mode stdio` (the 2025 eras), with `validator`. */
async function v1Client(
  e2e: E2E,
  scope: Scope,
  validator: jsonSchemaValidator = new AjvJsonSchemaValidator(),
): Promise<Client> {
  const client = new Client(
    { name: 'schema-ids', version: '1.0.0' },
    { jsonSchemaValidator: validator },
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--mode', 'stdio', '--sandbox-scope', scope.dir, ...BUNDLES],
      env: scope.env,
      cwd: scope.dir,
      stderr: 'pipe',
    }),
  );
  e2e.onCleanup(() => client.close());
  return client;
}

/** Each listed tool's outputSchema `$id`, by tool name. */
function idsByTool(
  tools: readonly { name: string; outputSchema?: Record<string, unknown> | undefined }[],
): Map<string, unknown> {
  return new Map(tools.map((tool) => [tool.name, tool.outputSchema?.['$id']]));
}

describe.concurrent('output schema ids', { timeout: 60_000 }, () => {
  it('SPEC §3: every listed output schema has a content $id: equal schemas share one, different ones never do', async (context) => {
    const { e2e, scope } = await setup(context);
    const { tools } = await (await v1Client(e2e, scope)).listTools();
    const byId = new Map<string, unknown[]>();
    for (const tool of tools) {
      const id = tool.outputSchema?.['$id'];
      expect(id, tool.name).toMatch(ID);
      byId.set(id as string, [...(byId.get(id as string) ?? []), tool.outputSchema]);
    }
    for (const [id, schemas] of byId)
      for (const schema of schemas) expect(schema, id).toEqual(schemas[0]);
    const distinct = [...byId.values()].map(([schema]) => ({ ...(schema as object), $id: 'x' }));
    distinct.forEach((schema, i) => {
      for (const other of distinct.slice(i + 1)) expect(schema).not.toEqual(other);
    });
    // Sharing is the point: dozens of tools, a handful of schemas.
    expect(tools.length).toBeGreaterThan(40);
    expect(byId.size).toBeLessThan(10);
    // Stable: another server process in the 2026-07-28 era names the same ids for the same tools.
    const modern = await modernStdioClient(e2e, scope, BUNDLES);
    expect(idsByTool((await modern.listTools()).tools)).toEqual(idsByTool(tools));
  });

  it('SPEC §3: the SDK v1 client compiles each distinct output schema once, however often it lists', async (context) => {
    const { e2e, scope } = await setup(context);
    const validator = new CountingValidator();
    const client = await v1Client(e2e, scope, validator);
    const { tools } = await client.listTools();
    const ids = new Set(tools.map((tool) => tool.outputSchema?.['$id'] as string));
    expect(validator.compiled).toBe(ids.size);
    for (const id of ids) expect(validator.ajv.getSchema(id), id).toBeDefined();
    await client.listTools();
    await client.listTools();
    expect(validator.compiled).toBe(ids.size);
  });

  it('SPEC §3: the v1 client still checks structuredContent against the listed schema, a result and a refusal', async (context) => {
    const { e2e, scope } = await setup(context);
    const validator = new CountingValidator();
    const client = await v1Client(e2e, scope, validator);
    await client.listTools();
    await client.listTools();
    const done = (await client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: 'echo hi', execution_mode: 'Synchronous' },
    })) as CallToolResult;
    expect(structured<CommandResult>(done)).toMatchObject({ status: 'completed', output: 'hi\n' });
    expect(validator.checked).toBe(1);
    const refused = (await client.callTool({
      name: 'cancel',
      arguments: { id: 'op_none_1' },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(structured<{ error: { code: string } }>(refused).error.code).toBe('OPERATION_UNKNOWN');
    expect(validator.checked).toBe(2);
  });

  it('SPEC §3: the id depends on the content alone: key order does not count, an $id brought along is replaced', () => {
    const tool = (outputSchema: Record<string, unknown>) =>
      withSchemaId({
        name: 't',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', ...outputSchema },
      }).outputSchema?.['$id'];
    const ordered = tool({ properties: { a: { type: 'string', minLength: 1 } }, required: ['a'] });
    expect(ordered).toMatch(ID);
    expect(tool({ required: ['a'], properties: { a: { minLength: 1, type: 'string' } } })).toBe(
      ordered,
    );
    // A claimed id (here one of Ahma's own) names nothing: the content decides.
    const claimed = { $id: ordered, properties: { a: { type: 'number' } }, required: ['a'] };
    expect(tool(claimed)).toMatch(ID);
    expect(tool(claimed)).not.toBe(ordered);
    expect(tool({ ...claimed, $id: 'https://example.com/s' })).toBe(tool(claimed));
    expect(tool({ required: [] })).not.toBe(tool({ required: ['a'] }));
  });

  it('SPEC §12: the 2026-07-28 client validates structuredContent with the listed schemas', async (context) => {
    const { e2e, scope } = await setup(context);
    const client = await modernStdioClient(e2e, scope, BUNDLES);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'sandboxed_shell')?.outputSchema?.['$id']).toMatch(
      ID,
    );
    // The v2 client compiles a tool's schema at its first call: a schema it could not compile is
    // an error before the request, one the content failed an error after it.
    const done = await client.callTool({
      name: 'sandboxed_shell',
      arguments: { command: 'echo hi', execution_mode: 'Synchronous' },
    });
    expect(done.structuredContent).toMatchObject({ status: 'completed', output: 'hi\n' });
  });
});
