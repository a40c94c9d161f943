// RegistryDraft: add, update and remove applied to a copy of the entries, each checked as it is
// applied (FR4.1–FR4.3, EC5). The draft never touches the entries it was made from.
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/registry/command.js';
import { nameOf, RegistryDraft, type DraftRules } from '../../src/registry/draft.js';
import { commandEntries, type RegistryEntry } from '../../src/registry/registry-file.js';
import { refusal, removeDir, rules, tempDir, writeExecutable } from './helpers.js';

let scope = '';

beforeAll(async () => {
  scope = await tempDir('draft');
  await writeExecutable(join(scope, 'scripts', 'greet.sh'));
  await writeExecutable(join(scope, 'scripts', 'other.sh'));
});

afterAll(async () => {
  await removeDir(scope);
});

const greet = {
  name: 'greet',
  exec: './scripts/greet.sh',
  description: 'Greet someone',
  args: { who: { type: 'string', required: true } },
  timeout: '30s',
};

/** A draft over `commands` (a registry file's commands map). */
function draftOf(
  commands: Record<string, unknown> = {},
  overrides: Partial<DraftRules> = {},
): { draft: RegistryDraft; entries: Map<string, RegistryEntry> } {
  const entries = commandEntries(commands);
  return { draft: new RegistryDraft(entries, rules(scope, overrides)), entries };
}

describe('RegistryDraft.add', () => {
  it('FR4.1: a valid command is added and returned; the draft is changed', async () => {
    const { draft } = draftOf();
    expect(draft.changed).toBe(false);
    const added = await draft.add(greet);
    expect(added).toEqual(parseCommand(greet));
    expect(draft.entries.get('greet')).toEqual({ kind: 'command', command: added });
    expect(draft.changed).toBe(true);
  });

  it('FR4.1: the entries the draft was made from are not changed', async () => {
    const { draft, entries } = draftOf({ other: { exec: 'wc' } });
    await draft.add(greet);
    draft.remove({ name: 'other' });
    expect([...entries.keys()]).toEqual(['other']);
    expect([...draft.entries.keys()]).toEqual(['greet']);
  });

  it('FR4.1: the description is optional, as in instant-mcp and import_config; "" means none', async () => {
    for (const description of [undefined, '']) {
      const { draft } = draftOf();
      const added = await draft.add({ ...greet, description });
      expect(added).not.toHaveProperty('description');
      expect(draft.entries.get('greet')).toEqual({ kind: 'command', command: added });
    }
  });

  it('FR4.1: an invalid command is COMMAND_INVALID and adds nothing', async () => {
    const { draft } = draftOf();
    await refusal(draft.add({ ...greet, name: 'bad-name' }), 'COMMAND_INVALID');
    await refusal(draft.add({ ...greet, timeout: '1d' }), 'COMMAND_INVALID');
    await refusal(draft.add('greet'), 'COMMAND_INVALID');
    expect(draft.entries.size).toBe(0);
    expect(draft.changed).toBe(false);
  });

  it('EC5: a name already registered is COMMAND_EXISTS, suggesting update_command', async () => {
    const { draft } = draftOf({ greet: { ...greet } });
    const error = await refusal(draft.add({ ...greet, timeout: '1m' }), 'COMMAND_EXISTS');
    expect(error.message).toBe(
      'command "greet" already exists; use update_command to change it, or remove_command first',
    );
    expect(draft.entries.get('greet')).toMatchObject({ command: { timeout: '30s' } });
    expect(draft.changed).toBe(false);
  });

  it('EC5: a name held by an invalid entry is COMMAND_EXISTS too, saying it is not served', async () => {
    const { draft } = draftOf({ greet: { exec: 'wc', timeout: 'never' } });
    await refusal(
      draft.add(greet),
      'COMMAND_EXISTS',
      'command "greet" already exists (it is invalid and not served); use update_command',
    );
  });

  it("FR4.1: a name that is another tool's (a built-in, a tool file) is COMMAND_EXISTS, naming the owner", async () => {
    const { draft } = draftOf(
      {},
      {
        nameTaken: (name) => (name === 'greet' ? 'a tool of tools/greet.json' : undefined),
      },
    );
    const error = await refusal(draft.add(greet), 'COMMAND_EXISTS');
    expect(error.message).toBe('"greet" is already a tool of tools/greet.json; pick another name');
    await expect(draft.add({ ...greet, name: 'greet2' })).resolves.toMatchObject({
      name: 'greet2',
    });
  });

  it('FR6.2: the executable must exist and be executable at add time', async () => {
    const { draft } = draftOf();
    await refusal(
      draft.add({ ...greet, exec: './scripts/missing.sh' }),
      'EXEC_NOT_FOUND',
      'does not exist',
    );
    await refusal(draft.add({ ...greet, exec: 'no-such-program-anywhere' }), 'EXEC_NOT_FOUND');
    await refusal(draft.add({ ...greet, exec: './scripts' }), 'EXEC_NOT_FOUND', 'is not a file');
    await expect(draft.add({ ...greet, exec: 'wc' })).resolves.toMatchObject({ exec: 'wc' });
    expect([...draft.entries.keys()]).toEqual(['greet']);
  });
});

describe('RegistryDraft.update', () => {
  it("FR4.3: the given fields replace the command's; the others stay", async () => {
    const { draft } = draftOf({ greet });
    const updated = await draft.update({ name: 'greet', timeout: '5m', async: true });
    expect(updated).toEqual({ ...parseCommand(greet), timeout: '5m', async: true });
    expect(draft.entries.get('greet')).toEqual({ kind: 'command', command: updated });
    expect(draft.changed).toBe(true);
  });

  it('FR4.3: null unsets the description too (add_command does not require one)', async () => {
    const { draft } = draftOf({ greet });
    const updated = await draft.update({ name: 'greet', description: null });
    expect(updated).toEqual({ ...parseCommand(greet), description: undefined });
    expect(updated).not.toHaveProperty('description');
  });

  it('FR4.3: args are replaced as a whole, not merged', async () => {
    const { draft } = draftOf({ greet });
    const updated = await draft.update({
      name: 'greet',
      args: { greeting: { type: 'string', flag: '-g' } },
    });
    expect(updated.args).toEqual({ greeting: { type: 'string', flag: '-g' } });
  });

  it('FR4.3: null unsets an optional field (args, timeout, async)', async () => {
    const { draft } = draftOf({ greet: { ...greet, async: true } });
    const updated = await draft.update({ name: 'greet', args: null, timeout: null, async: null });
    expect(updated).toEqual({
      name: 'greet',
      exec: './scripts/greet.sh',
      description: 'Greet someone',
    });
  });

  it('FR4.3: the result is checked as a whole: an invalid field is COMMAND_INVALID and changes nothing', async () => {
    const { draft } = draftOf({ greet });
    await refusal(draft.update({ name: 'greet', timeout: 'soon' }), 'COMMAND_INVALID');
    await refusal(
      draft.update({ name: 'greet', color: 'red' }),
      'COMMAND_INVALID',
      'unknown field "color"',
    );
    await refusal(
      draft.update({ name: 'greet', exec: null }),
      'COMMAND_INVALID',
      'exec is required',
    );
    expect(draft.entries.get('greet')).toEqual({ kind: 'command', command: parseCommand(greet) });
    expect(draft.changed).toBe(false);
  });

  it('FR4.3: a new exec is checked; an unchanged one is not (the command can still be repaired)', async () => {
    const file = await writeExecutable(join(scope, 'scripts', 'vanishing.sh'));
    const { draft } = draftOf({ v: { exec: './scripts/vanishing.sh', description: 'd' } });
    await rm(file);
    // Its exec is gone, but a description change does not depend on it.
    await expect(draft.update({ name: 'v', description: 'new' })).resolves.toMatchObject({
      description: 'new',
    });
    await refusal(draft.update({ name: 'v', exec: './scripts/also-missing.sh' }), 'EXEC_NOT_FOUND');
    await expect(draft.update({ name: 'v', exec: './scripts/other.sh' })).resolves.toMatchObject({
      exec: './scripts/other.sh',
    });
  });

  it('FR4.3: the name cannot be changed by update: it names the command to change', async () => {
    const { draft } = draftOf({ greet });
    await draft.update({ name: 'greet', description: 'x' });
    expect([...draft.entries.keys()]).toEqual(['greet']);
  });

  it('FR4.3: an unknown name is COMMAND_UNKNOWN, suggesting the closest registered name', async () => {
    const { draft } = draftOf({ greet, count_lines: { exec: 'wc' } });
    const error = await refusal(draft.update({ name: 'gret', timeout: '5m' }), 'COMMAND_UNKNOWN');
    expect(error.message).toBe(
      'no registered command "gret"; did you mean "greet"? (list_commands lists them)',
    );
    await refusal(
      draft.update({ name: 'something_else' }),
      'COMMAND_UNKNOWN',
      'no registered command "something_else" (list_commands lists them)',
    );
  });

  it('FR4.3: update needs an object with a name', async () => {
    const { draft } = draftOf({ greet });
    await refusal(draft.update('greet'), 'COMMAND_INVALID', 'update_command takes an object');
    await refusal(draft.update({ timeout: '5m' }), 'COMMAND_INVALID', 'name is required');
    await refusal(draft.update({ name: '' }), 'COMMAND_INVALID', 'name is required');
    await refusal(draft.update({ name: 7 }), 'COMMAND_INVALID', 'name is required');
  });

  it('FR4.3: an invalid (rejected) entry is repaired by update, its exec checked', async () => {
    const { draft } = draftOf({
      broken: { exec: './scripts/greet.sh', description: 'was broken', timeout: 'soon' },
    });
    expect(draft.entries.get('broken')?.kind).toBe('rejected');
    const repaired = await draft.update({ name: 'broken', timeout: '10s' });
    expect(repaired).toEqual({
      name: 'broken',
      exec: './scripts/greet.sh',
      description: 'was broken',
      timeout: '10s',
    });
    expect(draft.entries.get('broken')).toEqual({ kind: 'command', command: repaired });

    const { draft: other } = draftOf({ gone: { exec: './scripts/nope.sh', timeout: 'soon' } });
    await refusal(other.update({ name: 'gone', timeout: '10s' }), 'EXEC_NOT_FOUND');
  });

  it('FR4.3: a rejected entry that is not even an object is rebuilt from the update alone', async () => {
    const { draft } = draftOf({ scalar: 42 });
    await expect(draft.update({ name: 'scalar', exec: 'wc' })).resolves.toEqual({
      name: 'scalar',
      exec: 'wc',
    });
  });
});

describe('RegistryDraft.remove', () => {
  it('FR4.2: a command is removed, and returned', () => {
    const { draft } = draftOf({ greet, other: { exec: 'wc' } });
    const removed = draft.remove({ name: 'greet' });
    expect(removed).toEqual({ kind: 'command', command: parseCommand(greet) });
    expect([...draft.entries.keys()]).toEqual(['other']);
    expect(draft.changed).toBe(true);
  });

  it('FR4.2: an invalid (rejected) entry can be removed too', () => {
    const { draft } = draftOf({ broken: { exec: 'wc', timeout: 'x' } });
    expect(draft.remove({ name: 'broken' })).toMatchObject({ kind: 'rejected', name: 'broken' });
    expect(draft.entries.size).toBe(0);
  });

  it('FR4.2: an unknown name is COMMAND_UNKNOWN with a suggestion; no name is COMMAND_INVALID', async () => {
    const { draft } = draftOf({ greet });
    await refusal(
      Promise.resolve().then(() => draft.remove({ name: 'greeet' })),
      'COMMAND_UNKNOWN',
      'did you mean "greet"?',
    );
    await refusal(
      Promise.resolve().then(() => draft.remove({})),
      'COMMAND_INVALID',
      'name is required',
    );
    await refusal(
      Promise.resolve().then(() => draft.remove(null)),
      'COMMAND_INVALID',
      'name is required',
    );
    expect(draft.changed).toBe(false);
  });
});

describe('RegistryDraft: names that are no command names', () => {
  it('FR4.2: a huge name is refused without measuring its distance to every command', async () => {
    const commands = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `cmd_${String(i)}`,
        { ...greet, name: `cmd_${String(i)}` },
      ]),
    );
    const { draft } = draftOf(commands);
    const error = await refusal(
      Promise.resolve().then(() => draft.remove({ name: 'x'.repeat(1_000_000) })),
      'COMMAND_UNKNOWN',
    );
    // No "did you mean": the edit distance to every command (seconds for such a name) is skipped.
    expect(error.message).not.toContain('did you mean');
  });
});

describe('RegistryDraft.put', () => {
  it('FR4.7: put replaces whatever has the name, valid or not, without asking nameTaken again', async () => {
    const taken: string[] = [];
    const { draft } = draftOf(
      { greet, broken: { exec: 'wc', timeout: 'x' } },
      { nameTaken: (name) => (taken.push(name), undefined) },
    );
    await draft.put(parseCommand({ name: 'greet', exec: 'wc' }));
    await draft.put(parseCommand({ name: 'broken', exec: 'wc' }));
    expect(taken).toEqual([]);
    expect(draft.entries.get('greet')).toEqual({
      kind: 'command',
      command: { name: 'greet', exec: 'wc' },
    });
    expect(draft.entries.get('broken')?.kind).toBe('command');
  });

  it('FR4.7: a new name is checked against other tools, and the exec must run', async () => {
    const { draft } = draftOf(
      {},
      { nameTaken: (name) => (name === 'help' ? 'a built-in tool' : undefined) },
    );
    await refusal(draft.put(parseCommand({ name: 'help', exec: 'wc' })), 'COMMAND_EXISTS');
    await refusal(draft.put(parseCommand({ name: 'x', exec: './nope' })), 'EXEC_NOT_FOUND');
    expect(draft.changed).toBe(false);
  });
});

describe('RegistryDraft.discard', () => {
  it('FR4.6: a discarded draft has nothing to persist, whatever was changed', async () => {
    const { draft } = draftOf();
    await draft.add(greet);
    expect(draft.changed).toBe(true);
    draft.discard();
    expect(draft.changed).toBe(false);
  });
});

describe('nameOf', () => {
  it('FR4.5: the name of a command or of a rejected entry', () => {
    const entries = commandEntries({ a: { exec: 'wc' }, b: 'junk' });
    expect([...entries.values()].map(nameOf)).toEqual(['a', 'b']);
  });
});

describe('RegistryDraft: permissions at add time', () => {
  it('FR6.2: an exec that exists without the x bit is refused with the chmod hint', async () => {
    const file = await writeExecutable(join(scope, 'scripts', 'noexec.sh'));
    await chmod(file, 0o644);
    const { draft } = draftOf();
    await refusal(
      draft.add({ ...greet, exec: './scripts/noexec.sh' }),
      'EXEC_NOT_FOUND',
      'is not executable (chmod +x it)',
    );
  });
});
