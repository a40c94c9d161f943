// The pipeline every command tool shares (src/tools/command-tool.ts), driven with a tool of the
// test's own: its descriptor, the order of its refusals (arguments, then lane, then the tool's own
// command) with nothing run before a refusal, and what reaches the command — the call's mode, the
// lane, the plan's timeout — and its cleanup. A real engine, real commands in the real sandbox.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AhmaError,
  ArgumentValidator,
  META_PARAMETER_PROPERTIES,
  createEngine,
  type Engine,
} from '@ahma/core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_OUTPUT_SCHEMA, outputSchemaWithError } from '../../src/calls/results.js';
import {
  defineCommandTool,
  operationTool,
  type CommandPlan,
  type CommandToolSpec,
} from '../../src/tools/command-tool.js';
import type { CallContext, ToolContext, ToolOutcome } from '../../src/tools/tool.js';
import { E2E, type Scope } from '../support/harness.js';

const e2e = new E2E();
let scope: Scope;
let engine: Engine;
let context: ToolContext;

beforeAll(async () => {
  scope = await e2e.scope({ noTools: true });
  await mkdir(scope.stateRoot, { recursive: true });
  engine = await createEngine({ scope: scope.dir, stateDir: scope.stateRoot, env: scope.env });
  context = {
    engine,
    operations: engine.operations,
    definitionTools: () => new Map(),
    validator: new ArgumentValidator(),
    logger: pino({ level: 'silent' }),
    env: scope.env,
    defaultTimeoutSeconds: 60,
    forceSync: false,
    inlineWaitMs: 0,
    heartbeatMs: 1000,
  };
});
afterAll(async () => {
  await engine.close();
  await e2e.cleanup();
});

const call = (): CallContext => ({ signal: new AbortController().signal, progress: undefined });

/** A tool's spec that runs `script` (its `word` argument appended), keeping what it built. */
function probeSpec(name: string, script: string, overrides: Partial<CommandToolSpec> = {}) {
  const built: Record<string, unknown>[] = [];
  let cleanedUp = 0;
  const spec: CommandToolSpec = {
    name,
    description: `${name}: runs ${script}`,
    inputSchema: {
      type: 'object',
      properties: { word: { type: 'string' }, ...META_PARAMETER_PROPERTIES },
      additionalProperties: false,
    },
    synchronous: true,
    fromWords: (words) => ({ word: words.join(' ') }),
    toCommand(args): Promise<CommandPlan> {
      built.push(args);
      return Promise.resolve({
        command: { kind: 'shell', script: `${script} ${String(args['word'] ?? '')}` },
        cwd: scope.dir,
        timeoutSeconds: undefined,
        cleanup: () => {
          cleanedUp += 1;
          return Promise.resolve();
        },
      });
    },
    ...overrides,
  };
  return { spec, built, cleanedUp: () => cleanedUp };
}

/** The tool of probeSpec, in the test's context. */
function probe(name: string, script: string, overrides: Partial<CommandToolSpec> = {}) {
  const made = probeSpec(name, script, overrides);
  return { ...made, tool: defineCommandTool(context, made.spec) };
}

function refusal(outcome: ToolOutcome): { code: string | undefined; message: string } {
  if (outcome.kind !== 'refused') throw new Error(`not refused: ${JSON.stringify(outcome)}`);
  return { code: outcome.code, message: outcome.message };
}

function snapshot(outcome: ToolOutcome) {
  if (outcome.kind !== 'operation') throw new Error(`no operation: ${JSON.stringify(outcome)}`);
  return outcome.snapshot;
}

const operationsOf = (tool: string) => engine.operations.status().filter((o) => o.tool === tool);

describe.concurrent('defineCommandTool', () => {
  it('SPEC §3: the descriptor is the tool’s own name, description and input, answers the command result or {error}, and may run as a task (SPEC §12)', () => {
    const { tool } = probe('descriptor_probe', 'true');
    expect(tool.tool).toEqual({
      name: 'descriptor_probe',
      description: 'descriptor_probe: runs true',
      inputSchema: expect.objectContaining({ type: 'object' }) as unknown,
      outputSchema: outputSchemaWithError(COMMAND_OUTPUT_SCHEMA),
      execution: { taskSupport: 'optional' },
    });
    expect(Object.keys(tool.tool)).toEqual([
      'name',
      'description',
      'inputSchema',
      'outputSchema',
      'execution',
    ]);
    expect(tool.fromWords(['a', 'b'])).toEqual({ word: 'a b' });
  });

  it('SPEC §2: arguments that do not match the input schema are refused before the command is built', async () => {
    const { tool, built } = probe('schema_probe', 'true');
    const { code, message } = refusal(await tool.call({ word: 3, extra: true }, call()));
    expect(code).toBe('ARGUMENTS_INVALID');
    expect(message).toContain('Invalid arguments for schema_probe');
    expect(built).toEqual([]);
    expect(operationsOf('schema_probe')).toEqual([]);
  });

  it('SPEC §14: a concurrency that would give a read_only tool write access is refused before the command is built', async () => {
    const { tool, built } = probe('lane_probe', 'true', { lane: 'read_only' });
    const { code, message } = refusal(await tool.call({ concurrency: 'exclusive' }, call()));
    expect(code).toBe('ARGUMENTS_INVALID');
    expect(message).toContain('lane_probe runs read_only');
    expect(built).toEqual([]);
    expect(operationsOf('lane_probe')).toEqual([]);
  });

  it('SPEC §2: an AhmaError from building the command refuses the call with its code, and nothing runs', async () => {
    const { tool } = probe('build_probe', 'true', {
      toCommand: () => Promise.reject(new AhmaError('PATH_OUTSIDE_SCOPE', '/etc is outside')),
    });
    expect(refusal(await tool.call({}, call()))).toEqual({
      code: 'PATH_OUTSIDE_SCOPE',
      message: '/etc is outside',
    });
    expect(operationsOf('build_probe')).toEqual([]);
  });

  it('SPEC §2: an unexpected error from building the command is not turned into a refusal', async () => {
    const { tool } = probe('bug_probe', 'true', {
      toCommand: () => Promise.reject(new TypeError('a bug')),
    });
    await expect(tool.call({}, call())).rejects.toThrow('a bug');
  });

  it('SPEC §3: a synchronous tool answers with the finished command, whose cleanup ran once', async () => {
    const { tool, built, cleanedUp } = probe('sync_probe', 'echo');
    const done = snapshot(await tool.call({ word: 'hello' }, call()));
    expect(done.status).toBe('completed');
    expect(done.result?.output).toBe('hello\n');
    expect(built).toEqual([{ word: 'hello' }]);
    expect(cleanedUp()).toBe(1);
  });

  it('R2.1, R10.1, R3.4: an asynchronous tool answers while its command runs; execution_mode Synchronous, or --sync, makes the call wait', async () => {
    const overrides = { synchronous: false, lane: 'service' as const };
    const { tool, spec } = probe('async_probe', 'sleep 0.5; echo', overrides);
    const started = snapshot(await tool.call({ word: 'late' }, call()));
    expect(started.status).toBe('running');
    const waited = snapshot(
      await tool.call({ word: 'now', execution_mode: 'Synchronous' }, call()),
    );
    expect(waited.status).toBe('completed');
    expect(waited.result?.output).toBe('now\n');
    const forced = defineCommandTool({ ...context, forceSync: true }, spec);
    const blocked = snapshot(await forced.call({ word: 'forced' }, call()));
    expect(blocked.result?.output).toBe('forced\n');
    const [finished] = await engine.operations.await([started.id]);
    expect(finished?.result?.output).toBe('late\n');
  });

  it('SPEC §3: the plan’s timeout is the command’s', async () => {
    const { tool } = probe('timeout_probe', 'sleep 30', {
      toCommand: () =>
        Promise.resolve({
          command: { kind: 'shell', script: 'sleep 30' },
          cwd: scope.dir,
          timeoutSeconds: 1,
        }),
    });
    const done = snapshot(await tool.call({}, call()));
    expect(done.status).toBe('timed_out');
  });

  it('SPEC §14: the lane decided reaches the command: a read_only call cannot write the workspace', async () => {
    const { tool } = probe('read_only_probe', 'touch');
    const file = join(scope.dir, 'written-by-read-only');
    const done = snapshot(await tool.call({ word: file, concurrency: 'read_only' }, call()));
    expect(done.status).toBe('failed');
    expect(existsSync(file)).toBe(false);
  });
});

describe.concurrent('operationTool', () => {
  it('SPEC §2: its handler only sees arguments that match the input schema', async () => {
    const seen: Record<string, unknown>[] = [];
    const tool = operationTool(
      context,
      {
        name: 'handler_probe',
        description: 'probe',
        inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        fromWords: () => ({}),
      },
      (args) => {
        seen.push(args);
        return Promise.resolve({ kind: 'answer', result: { content: [] } });
      },
    );
    expect(refusal(await tool.call({ n: 'x' }, call())).code).toBe('ARGUMENTS_INVALID');
    expect((await tool.call({ n: 1 }, call())).kind).toBe('answer');
    expect(seen).toEqual([{ n: 1 }]);
  });
});
