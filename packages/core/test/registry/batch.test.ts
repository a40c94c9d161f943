// batch_exec (FR4.6, EC6): operations applied in order on one draft, each seeing the ones before.
// Atomic: every operation validated, all kept or none, one write. Non-atomic: a result per
// operation, the successes kept, still one write.
import { readFile, stat } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';
import { BATCH_OPERATIONS, runBatch } from '../../src/registry/batch.js';
import { RegistryDraft } from '../../src/registry/draft.js';
import type { Registry } from '../../src/registry/registry.js';
import { caseDirs, openRegistry, rules, toolCommand } from './helpers.js';

const cases = caseDirs('batch');

const newScope = cases.scope;

const command = toolCommand;

const addOp = (name: string, extra: Record<string, unknown> = {}) => ({
  operation: 'add_command',
  params: command(name, extra),
});

/** A registry holding `existing`, and a counter of the changes it persisted. */
async function registryWith(
  ...existing: string[]
): Promise<{ registry: Registry; writes: () => number }> {
  const registry = await openRegistry(await newScope());
  for (const name of existing) await registry.change((draft) => draft.add(command(name)));
  let writes = 0;
  registry.onChange(() => writes++);
  return { registry, writes: () => writes };
}

const names = (registry: Registry): string[] => registry.commands.map((c) => c.name);

async function onDisk(registry: Registry): Promise<string[]> {
  const document = JSON.parse(await readFile(registry.file, 'utf8')) as {
    commands: Record<string, unknown>;
  };
  return Object.keys(document.commands);
}

describe('runBatch: atomic (the default)', () => {
  it('FR4.6: every operation applies, in order, with one result each and one write', async () => {
    const { registry, writes } = await registryWith('old');
    const outcome = await registry.change((draft) =>
      runBatch(
        draft,
        [
          addOp('lint'),
          addOp('test', { timeout: '5m' }),
          { operation: 'update_command', params: { name: 'lint', async: true } },
          { operation: 'remove_command', params: { name: 'old' } },
        ],
        true,
      ),
    );
    expect(outcome).toEqual({
      success: true,
      atomic: true,
      rolledBack: false,
      results: [
        { index: 0, operation: 'add_command', name: 'lint', success: true },
        { index: 1, operation: 'add_command', name: 'test', success: true },
        { index: 2, operation: 'update_command', name: 'lint', success: true },
        { index: 3, operation: 'remove_command', name: 'old', success: true },
      ],
    });
    expect(names(registry)).toEqual(['lint', 'test']);
    expect(registry.get('lint')).toMatchObject({ command: { async: true } });
    expect(await onDisk(registry)).toEqual(['lint', 'test']);
    expect(writes()).toBe(1);
  });

  it('EC6: the first failure drops every operation: nothing is written, and the results stop there', async () => {
    const { registry, writes } = await registryWith('old');
    const before = await readFile(registry.file, 'utf8');
    const inode = (await stat(registry.file)).ino;
    const outcome = await registry.change((draft) =>
      runBatch(
        draft,
        [
          addOp('lint'),
          { operation: 'remove_command', params: { name: 'old' } },
          addOp('broken', { exec: './missing.sh' }),
          addOp('never_reached'),
        ],
        true,
      ),
    );
    expect(outcome.success).toBe(false);
    expect(outcome.rolledBack).toBe(true);
    expect(outcome.atomic).toBe(true);
    expect(outcome.results).toHaveLength(3);
    expect(outcome.results.slice(0, 2).every((r) => r.success)).toBe(true);
    expect(outcome.results[2]).toMatchObject({
      index: 2,
      operation: 'add_command',
      name: 'broken',
      success: false,
      error: { code: 'EXEC_NOT_FOUND' },
    });
    expect(names(registry)).toEqual(['old']);
    expect(await readFile(registry.file, 'utf8')).toBe(before);
    expect((await stat(registry.file)).ino).toBe(inode);
    expect(writes()).toBe(0);
  });

  it('FR4.6: adds without a description are kept, as instant-mcp\'s "Batch Setup" gives them', async () => {
    const { registry } = await registryWith();
    const bare = (name: string) => ({
      operation: 'add_command',
      params: { name, exec: './tool.sh' },
    });
    const outcome = await registry.change((draft) =>
      runBatch(draft, [bare('lint'), bare('test'), bare('deploy')], true),
    );
    expect(outcome.success).toBe(true);
    expect(registry.commands).toEqual([
      { name: 'lint', exec: './tool.sh' },
      { name: 'test', exec: './tool.sh' },
      { name: 'deploy', exec: './tool.sh' },
    ]);
  });

  it('EC6: each operation sees the ones before it (so an atomic batch fails on a name it already added)', async () => {
    const { registry } = await registryWith();
    const outcome = await registry.change((draft) =>
      runBatch(draft, [addOp('twice'), addOp('twice')], true),
    );
    expect(outcome.rolledBack).toBe(true);
    expect(outcome.results[1]?.error?.code).toBe('COMMAND_EXISTS');
    expect(outcome.results[1]?.error?.message).toContain('use update_command');
    expect(names(registry)).toEqual([]);
  });

  it('EC6: an invalid command later in the batch rolls back valid ones before it', async () => {
    const { registry } = await registryWith();
    const outcome = await registry.change((draft) =>
      runBatch(draft, [addOp('good'), addOp('bad', { timeout: '2d' })], true),
    );
    expect(outcome.results[1]?.error?.code).toBe('COMMAND_INVALID');
    expect(names(registry)).toEqual([]);
  });
});

describe('runBatch: non-atomic', () => {
  it('EC6: every operation runs; successes are kept and failures reported, in one write', async () => {
    const { registry, writes } = await registryWith('old');
    const outcome = await registry.change((draft) =>
      runBatch(
        draft,
        [
          addOp('lint'),
          addOp('old'),
          { operation: 'update_command', params: { name: 'ghost', timeout: '1m' } },
          { operation: 'remove_command', params: { name: 'old' } },
          addOp('bad name'),
          addOp('test'),
        ],
        false,
      ),
    );
    expect(outcome.success).toBe(false);
    expect(outcome.rolledBack).toBe(false);
    expect(outcome.atomic).toBe(false);
    expect(outcome.results.map((r) => [r.index, r.name, r.success, r.error?.code])).toEqual([
      [0, 'lint', true, undefined],
      [1, 'old', false, 'COMMAND_EXISTS'],
      [2, 'ghost', false, 'COMMAND_UNKNOWN'],
      [3, 'old', true, undefined],
      [4, 'bad name', false, 'COMMAND_INVALID'],
      [5, 'test', true, undefined],
    ]);
    expect(outcome.results[1]?.error?.message).toContain('use update_command');
    expect(names(registry)).toEqual(['lint', 'test']);
    expect(await onDisk(registry)).toEqual(['lint', 'test']);
    expect(writes()).toBe(1);
  });

  it('EC6: a non-atomic batch where every operation fails writes nothing', async () => {
    const { registry, writes } = await registryWith('old');
    const outcome = await registry.change((draft) =>
      runBatch(draft, [addOp('old'), { operation: 'remove_command', params: {} }], false),
    );
    expect(outcome.success).toBe(false);
    expect(outcome.results.every((r) => !r.success)).toBe(true);
    expect(writes()).toBe(0);
  });

  it('FR4.6: a non-atomic batch that fully succeeds reports success', async () => {
    const { registry } = await registryWith();
    const outcome = await registry.change((draft) => runBatch(draft, [addOp('a')], false));
    expect(outcome).toEqual({
      success: true,
      atomic: false,
      rolledBack: false,
      results: [{ index: 0, operation: 'add_command', name: 'a', success: true }],
    });
  });
});

describe('runBatch: malformed operations', () => {
  it('FR4.6: the operations are add_command, remove_command and update_command', () => {
    expect(BATCH_OPERATIONS).toEqual(['add_command', 'remove_command', 'update_command']);
  });

  it('FR4.6: an unknown operation, params that are not an object, or an entry that is not an object each fail alone', async () => {
    const scope = await newScope();
    const draft = new RegistryDraft(new Map(), rules(scope));
    const outcome = await runBatch(
      draft,
      [
        { operation: 'list_commands', params: {} },
        { operation: 'add_command', params: 'lint' },
        { operation: 'add_command' },
        'add_command',
        null,
        { operation: 42, params: { name: 'x' } },
        addOp('ok'),
      ],
      false,
    );
    expect(outcome.results).toEqual([
      {
        index: 0,
        operation: 'list_commands',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message:
            'operation "list_commands" is not one of add_command, remove_command, update_command',
        },
      },
      {
        index: 1,
        operation: 'add_command',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message: "params is an object: the operation's arguments",
        },
      },
      {
        index: 2,
        operation: 'add_command',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message: "params is an object: the operation's arguments",
        },
      },
      {
        index: 3,
        operation: 'undefined',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message: "params is an object: the operation's arguments",
        },
      },
      {
        index: 4,
        operation: 'undefined',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message: "params is an object: the operation's arguments",
        },
      },
      {
        index: 5,
        operation: '42',
        name: 'x',
        success: false,
        error: {
          code: 'COMMAND_INVALID',
          message: 'operation 42 is not one of add_command, remove_command, update_command',
        },
      },
      { index: 6, operation: 'add_command', name: 'ok', success: true },
    ]);
    expect([...draft.entries.keys()]).toEqual(['ok']);
    expect(draft.changed).toBe(true);
  });

  it('FR4.6: an empty batch succeeds and changes nothing', async () => {
    const scope = await newScope();
    const draft = new RegistryDraft(new Map(), rules(scope));
    expect(await runBatch(draft, [], true)).toEqual({
      success: true,
      atomic: true,
      rolledBack: false,
      results: [],
    });
    expect(draft.changed).toBe(false);
  });

  it('FR4.6: an error that is not a refusal (a bug, an I/O failure) is not swallowed into a result', async () => {
    const scope = await newScope();
    const draft = new RegistryDraft(new Map(), {
      ...rules(scope),
      nameTaken: () => {
        throw new TypeError('boom');
      },
    });
    await expect(runBatch(draft, [addOp('a')], false)).rejects.toThrow('boom');
  });
});
