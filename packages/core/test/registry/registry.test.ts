// The Registry (SPEC §8): loads its file (EC4 when corrupt), and persists every change atomically
// before anyone sees it (FR5, NFR2); changes run one at a time, in this process and across
// processes sharing the file, each on the file's latest content (EC1). Other processes here are
// real: node children using the built Registry (dist/), killed with SIGKILL for the crash cases.
import { spawn } from 'node:child_process';
import {
  chmod,
  copyFile,
  mkdir,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareRegisteredCall } from '../../src/registry/invocation.js';
import { parseCommand } from '../../src/registry/command.js';
import type { Registry } from '../../src/registry/registry.js';
import {
  caseDirs,
  deadPid,
  INSTANT_MCP,
  namesStartingWith,
  openRegistry,
  refusal,
  registryFile,
  runChild,
  startChild,
  toolCommand,
  writeExecutable,
} from './helpers.js';

const cases = caseDirs('registry');

const newScope = cases.scope;
const dir = cases.dir;

const command = toolCommand;

/** The registry file's commands map, as on disk. */
async function onDisk(file: string): Promise<Record<string, unknown>> {
  const document = JSON.parse(await readFile(file, 'utf8')) as {
    version: string;
    commands: Record<string, unknown>;
  };
  expect(document.version).toBe('1.0');
  return document.commands;
}

const names = (registry: Registry): string[] => registry.commands.map((c) => c.name);

const add = (registry: Registry, name: string, extra: Record<string, unknown> = {}) =>
  registry.change((draft) => draft.add(command(name, extra)));

describe('Registry.open', () => {
  it('FR5: a missing file is an empty registry; opening creates nothing', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    expect(registry.file).toBe(registryFile(scope));
    expect(registry.entries).toEqual([]);
    expect(registry.commands).toEqual([]);
    expect(registry.notices).toEqual([]);
    expect(await readdir(scope)).toEqual(['tool.sh']);
  });

  it("FR5: instant-mcp's state.json loads unmodified, its commands served and callable", async () => {
    const scope = await newScope();
    await writeExecutable(join(scope, 'scripts', 'greet.sh'), 'echo "Hello, $1"');
    await mkdir(join(scope, '.ahma'));
    await copyFile(join(INSTANT_MCP, 'state.json'), registryFile(scope));
    const registry = await openRegistry(scope);
    expect(registry.notices).toEqual([]);
    expect(names(registry)).toEqual(['count_lines', 'greet']);
    expect(registry.get('greet')).toMatchObject({
      kind: 'command',
      command: { exec: './scripts/greet.sh', async: true, timeout: '120s' },
    });
    const lookup = { scope, path: process.env['PATH'] };
    for (const found of registry.commands) {
      const call = await prepareRegisteredCall(found, { name: 'x', file: 'f.txt' }, lookup);
      expect(call.argv[0]?.startsWith('/')).toBe(true);
    }
    // A change keeps instant-mcp's commands as they were.
    const original = JSON.parse(await readFile(join(INSTANT_MCP, 'state.json'), 'utf8')) as {
      commands: Record<string, unknown>;
    };
    await add(registry, 'extra');
    const commands = await onDisk(registry.file);
    expect(Object.keys(commands)).toEqual(['count_lines', 'greet', 'extra']);
    expect(commands['count_lines']).toEqual(original.commands['count_lines']);
    expect(commands['greet']).toEqual(original.commands['greet']);
  });

  it('EC4: a corrupt file is moved aside to a timestamped backup; the registry starts empty with a notice', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    await writeFile(file, '{"version": "1.0", "commands": {"a": ');
    const registry = await openRegistry(scope);
    expect(registry.entries).toEqual([]);
    expect(registry.notices).toHaveLength(1);
    const [notice] = registry.notices;
    expect(notice?.problem).toMatch(/^not JSON: /);
    expect(notice?.backup).toMatch(
      /registry\.json\.corrupt-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$/,
    );
    expect(await readFile(notice?.backup ?? '', 'utf8')).toBe(
      '{"version": "1.0", "commands": {"a": ',
    );
    expect(await namesStartingWith(join(scope, '.ahma'), '')).toEqual([
      (notice?.backup ?? '').slice(join(scope, '.ahma').length + 1),
    ]);
    // The next change writes a fresh file; the backup stays.
    await add(registry, 'fresh');
    expect(Object.keys(await onDisk(file))).toEqual(['fresh']);
    expect(await readFile(notice?.backup ?? '', 'utf8')).toContain('"commands"');
  });

  it('EC4: a file of another version is moved aside the same way, not overwritten', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    const text = JSON.stringify({ version: '2.0', commands: { a: { exec: 'wc' } } });
    await writeFile(file, text);
    const registry = await openRegistry(scope);
    expect(registry.entries).toEqual([]);
    expect(registry.notices).toEqual([
      {
        problem: 'version "2.0" is not 1.0',
        backup: expect.stringContaining('.corrupt-') as unknown,
      },
    ]);
    expect(await readFile(registry.notices[0]?.backup ?? '', 'utf8')).toBe(text);
  });

  it('EC4: registries opening one corrupt file at the same time all open; it is moved aside once', async () => {
    const scope = await newScope();
    const dir = join(scope, '.ahma');
    await mkdir(dir);
    await writeFile(registryFile(scope), 'garbage');
    const registries = await Promise.all([1, 2, 3].map(() => openRegistry(scope)));
    expect(registries.flatMap((r) => r.entries)).toEqual([]);
    expect(registries.flatMap((r) => r.notices)).toHaveLength(1);
    expect(await namesStartingWith(dir, 'registry.json.corrupt-')).toHaveLength(1);
    expect(await readdir(dir)).toHaveLength(1);
  });

  it('EC1: a corrupt file is not moved aside while another process holds the lock; open waits and loads what it wrote', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    await writeFile(file, 'garbage');
    // Another process in the middle of a change: it holds the lock, and is about to replace the
    // corrupt file with a good one (moving the corrupt one aside itself).
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await writeFile(`${file}.lock`, String(holder.pid));
      const opening = openRegistry(scope);
      await new Promise((resolve) => setTimeout(resolve, 150));
      await rename(file, `${file}.corrupt-by-the-other`);
      await writeFile(`${file}.new`, JSON.stringify({ commands: { theirs: command('theirs') } }));
      await rename(`${file}.new`, file);
      await rm(`${file}.lock`);
      const registry = await opening;
      expect(names(registry)).toEqual(['theirs']);
      expect(registry.notices).toEqual([]);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it("NFR2: temporaries left by dead writers are removed on open; a live writer's are kept", async () => {
    const scope = await newScope();
    const dir = join(scope, '.ahma');
    await mkdir(dir);
    const dead = `registry.json.tmp-${String(deadPid())}-deadbeef`;
    const live = `registry.json.tmp-${String(process.pid)}-0000beef`;
    await writeFile(join(dir, dead), '{"version": "1.0", "comm');
    await writeFile(join(dir, live), '{');
    await writeFile(join(dir, 'registry.json'), '{"version": "1.0", "commands": {}}');
    const registry = await openRegistry(scope);
    expect(registry.notices).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual(['registry.json', live].sort());
  });

  it('FR5: invalid entries are listed but not served, and kept verbatim when the file is rewritten', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    const broken = { name: 'broken', exec: './tool.sh', timeout: 'whenever', note: ['kept'] };
    const mismatched = { name: 'elsewhere', exec: './tool.sh' };
    await writeFile(
      file,
      JSON.stringify({
        version: '1.0',
        commands: { ok: command('ok'), broken, mismatched },
      }),
    );
    const registry = await openRegistry(scope);
    expect(registry.entries.map((e) => e.kind)).toEqual(['command', 'rejected', 'rejected']);
    expect(names(registry)).toEqual(['ok']);
    expect(registry.get('mismatched')).toMatchObject({
      kind: 'rejected',
      problem: 'its key "mismatched" differs from its name "elsewhere"',
    });
    await add(registry, 'later');
    expect(await onDisk(file)).toEqual({
      ok: command('ok'),
      broken,
      mismatched,
      later: command('later'),
    });
  });

  it('EC4: what a command can put at the file, the lock or a temporary name never keeps a registry from opening', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    // A symlink loop at the file, a directory at a temporary's name, a live pid in the lock.
    await symlink('registry.json', file);
    await mkdir(`${file}.tmp-${String(deadPid())}-00000000`);
    await writeFile(`${file}.lock`, '1');
    const registry = await openRegistry(scope);
    expect(registry.commands).toEqual([]);
    expect(registry.notices).toMatchObject([{ problem: 'unreadable: ELOOP' }]);
    await rm(`${file}.lock`);
    await add(registry, 'after');
    expect(Object.keys(await onDisk(file))).toEqual(['after']);
  });

  it('EC4: a file that says it is empty but reads forever (/proc) is read no further than the limit', async () => {
    const scope = await newScope();
    await mkdir(join(scope, '.ahma'));
    await symlink('/proc/self/pagemap', registryFile(scope));
    const registry = await openRegistry(scope);
    expect(registry.notices).toMatchObject([{ problem: expect.stringMatching(/^larger than/) }]);
  });

  it('R7.6: a registry file named where commands can write, whose directory a symlink sends elsewhere, is REGISTRY_UNSAFE', async () => {
    const scope = await newScope();
    const elsewhere = await dir();
    await symlink(elsewhere, join(scope, 'link'));
    await refusal(
      openRegistry(scope, join(scope, 'link', 'registry.json')),
      'REGISTRY_UNSAFE',
      `resolves to ${elsewhere}`,
    );
  });

  it('FR5: a registry file whose directory is a file is REGISTRY_WRITE_FAILED at open', async () => {
    const scope = await newScope();
    await writeFile(join(scope, '.ahma'), 'not a directory');
    await expect(openRegistry(scope)).rejects.toMatchObject({ code: 'REGISTRY_WRITE_FAILED' });
  });
});

describe('Registry.change: persistence', () => {
  it('FR5: every change is on disk when it resolves: add, update, remove', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    const file = registry.file;

    await add(registry, 'greet', { timeout: '30s' });
    expect(await onDisk(file)).toEqual({ greet: command('greet', { timeout: '30s' }) });

    await registry.change((draft) => draft.update({ name: 'greet', timeout: '5m', async: true }));
    expect(await onDisk(file)).toEqual({
      greet: command('greet', { async: true, timeout: '5m' }),
    });

    await add(registry, 'other');
    await registry.change((draft) => Promise.resolve(draft.remove({ name: 'greet' })));
    expect(await onDisk(file)).toEqual({ other: command('other') });

    // What is on disk is what a fresh registry loads.
    const reopened = await openRegistry(scope);
    expect(reopened.commands).toEqual(registry.commands);
  });

  it('FR5: the file is replaced whole by each change (atomic rename: a new inode), leaving no temporary', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'one');
    const first = await stat(registry.file);
    await add(registry, 'two');
    const second = await stat(registry.file);
    expect(second.ino).not.toBe(first.ino);
    expect(await readdir(join(scope, '.ahma'))).toEqual(['registry.json']);
  });

  it('FR4.5: get returns an entry by name, undefined for an unknown one', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'greet');
    expect(registry.get('greet')).toEqual({
      kind: 'command',
      command: parseCommand(command('greet')),
    });
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.get('constructor')).toBeUndefined();
  });

  it('FR5: commands are listed in registration order, across reloads', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    for (const name of ['zeta', 'alpha', 'mid']) await add(registry, name);
    expect(names(registry)).toEqual(['zeta', 'alpha', 'mid']);
    expect(names(await openRegistry(scope))).toEqual(['zeta', 'alpha', 'mid']);
  });

  it("FR5: change resolves to the work's result", async () => {
    const registry = await openRegistry(await newScope());
    await expect(registry.change(() => Promise.resolve('answer'))).resolves.toBe('answer');
  });

  it('FR5: a change whose work throws is not persisted, and the registry stays as it was', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'keep');
    const before = await readFile(registry.file, 'utf8');
    const inode = (await stat(registry.file)).ino;
    await expect(
      registry.change(async (draft) => {
        await draft.add(command('lost'));
        throw new Error('work failed after adding');
      }),
    ).rejects.toThrow('work failed after adding');
    expect(names(registry)).toEqual(['keep']);
    expect(await readFile(registry.file, 'utf8')).toBe(before);
    expect((await stat(registry.file)).ino).toBe(inode);
    // The queue goes on after a failure.
    await add(registry, 'next');
    expect(names(registry)).toEqual(['keep', 'next']);
  });

  it('FR5: a refused change (EC5: duplicate name) is not persisted; its error suggests update_command', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'greet');
    const before = await readFile(registry.file, 'utf8');
    await refusal(
      add(registry, 'greet', { timeout: '9s' }),
      'COMMAND_EXISTS',
      'use update_command',
    );
    expect(await readFile(registry.file, 'utf8')).toBe(before);
    expect(registry.get('greet')).toMatchObject({ command: { name: 'greet' } });
  });

  it('FR4.6: a change whose draft is discarded is not persisted', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'keep');
    const before = await stat(registry.file);
    const result = await registry.change(async (draft) => {
      await draft.add(command('dropped'));
      draft.discard();
      return 'discarded';
    });
    expect(result).toBe('discarded');
    expect(names(registry)).toEqual(['keep']);
    expect((await stat(registry.file)).ino).toBe(before.ino);
    expect(Object.keys(await onDisk(registry.file))).toEqual(['keep']);
  });

  it('FR5: a change that changes nothing writes nothing (a missing file stays missing)', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await registry.change(() => Promise.resolve());
    await expect(stat(registry.file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('FR5: listeners hear each persisted change once, no failed one, and can unsubscribe', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    let heard = 0;
    const unsubscribe = registry.onChange(() => heard++);
    await add(registry, 'a');
    expect(heard).toBe(1);
    await refusal(add(registry, 'a'), 'COMMAND_EXISTS');
    await registry.change(() => Promise.resolve());
    expect(heard).toBe(1);
    await add(registry, 'b');
    expect(heard).toBe(2);
    unsubscribe();
    await add(registry, 'c');
    expect(heard).toBe(2);
  });

  it('FR5: REGISTRY_WRITE_FAILED when the file cannot be written: the change is made neither on disk nor in memory', async () => {
    const scope = await newScope();
    // A name of 250 bytes: its lock file (".lock") still fits in 255, a temporary beside it not.
    const file = join(scope, 'r'.repeat(250));
    const registry = await openRegistry(scope, file);
    const error = await refusal(add(registry, 'never'), 'REGISTRY_WRITE_FAILED');
    expect(error.message).toMatch(/^the change was not made: writing .* failed: ENAMETOOLONG/);
    expect(registry.entries).toEqual([]);
    expect(await readdir(scope)).toEqual(['tool.sh']);
  });

  it('FR5: REGISTRY_WRITE_FAILED when the registry directory cannot be made (a file is in its place)', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await writeFile(join(scope, '.ahma'), 'not a directory');
    await refusal(add(registry, 'never'), 'REGISTRY_WRITE_FAILED', 'the change was not made');
    expect(registry.entries).toEqual([]);
  });

  it.skipIf(process.getuid?.() === 0)(
    'FR5: REGISTRY_WRITE_FAILED when the directory is read-only, and nothing changes (skipped as root: root ignores permissions)',
    async () => {
      const scope = await newScope();
      const registry = await openRegistry(scope);
      await add(registry, 'before');
      const dir = join(scope, '.ahma');
      const before = await readFile(registry.file, 'utf8');
      await chmod(dir, 0o555);
      try {
        await refusal(add(registry, 'never'), 'REGISTRY_WRITE_FAILED', 'the change was not made');
      } finally {
        await chmod(dir, 0o755);
      }
      expect(names(registry)).toEqual(['before']);
      expect(await readFile(registry.file, 'utf8')).toBe(before);
    },
  );
});

describe('Registry.change: concurrency', () => {
  it('EC1: concurrent changes in one process run one at a time and none is lost', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    let heard = 0;
    registry.onChange(() => heard++);
    const wanted = Array.from({ length: 40 }, (_, i) => `cmd_${String(i)}`);
    await Promise.all(wanted.map((name) => add(registry, name)));
    expect(names(registry)).toEqual(wanted);
    expect(Object.keys(await onDisk(registry.file))).toEqual(wanted);
    expect(heard).toBe(40);
  });

  it('EC1: concurrent updates of one command each see the one before (read-modify-write is serialised)', async () => {
    const scope = await newScope();
    const registry = await openRegistry(scope);
    await add(registry, 'counter', { timeout: '1s' });
    await Promise.all(
      Array.from({ length: 20 }, () =>
        registry.change(async (draft) => {
          const entry = draft.entries.get('counter');
          const current = entry?.kind === 'command' ? (entry.command.timeout ?? '0s') : '0s';
          await new Promise((resolve) => setTimeout(resolve, 1));
          return draft.update({ name: 'counter', timeout: `${String(parseInt(current) + 1)}s` });
        }),
      ),
    );
    expect(registry.get('counter')).toMatchObject({ command: { timeout: '21s' } });
    expect(await onDisk(registry.file)).toMatchObject({ counter: { timeout: '21s' } });
  });

  it('EC1: processes changing one file at the same time lose nothing', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    const childBody = (tag: string) =>
      [
        `const registry = await open(${JSON.stringify(file)}, ${JSON.stringify(scope)});`,
        'for (let i = 0; i < 12; i++) {',
        `  await registry.change((draft) => draft.add({ name: '${tag}_' + i, exec: './tool.sh', description: 'd' }));`,
        '}',
      ].join('\n');
    const children = [startChild(childBody('child_a')), startChild(childBody('child_b'))];
    const registry = await openRegistry(scope);
    await Promise.all(Array.from({ length: 12 }, (_, i) => add(registry, `parent_${String(i)}`)));
    for (const child of children) {
      const result = await child.done;
      expect(result.code, result.stderr).toBe(0);
    }
    const onFile = Object.keys(await onDisk(file)).sort();
    const expected = ['child_a', 'child_b', 'parent'].flatMap((tag) =>
      Array.from({ length: 12 }, (_, i) => `${tag}_${String(i)}`),
    );
    expect(onFile).toEqual(expected.sort());
    expect(await readdir(join(scope, '.ahma'))).toEqual(['registry.json']);
  });

  it('EC1: a command another process added between two changes is seen at the next one and kept', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    const registry = await openRegistry(scope);
    let heard = 0;
    registry.onChange(() => heard++);
    await add(registry, 'first');
    heard = 0;
    await runChild(
      [
        `const registry = await open(${JSON.stringify(file)}, ${JSON.stringify(scope)});`,
        "await registry.change((draft) => draft.add({ name: 'from_child', exec: './tool.sh', description: 'd' }));",
      ].join('\n'),
    );
    // Not seen until the next change (the registry does not watch its file)...
    expect(registry.get('from_child')).toBeUndefined();
    await add(registry, 'from_parent');
    // ...which builds on it, and tells listeners once of both.
    expect(names(registry)).toEqual(['first', 'from_child', 'from_parent']);
    expect(Object.keys(await onDisk(file))).toEqual(['first', 'from_child', 'from_parent']);
    expect(heard).toBe(1);
  });

  it('EC1: a command another process removed between two changes stays removed', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    const registry = await openRegistry(scope);
    await add(registry, 'doomed');
    await runChild(
      [
        `const registry = await open(${JSON.stringify(file)}, ${JSON.stringify(scope)});`,
        "await registry.change(async (draft) => draft.remove({ name: 'doomed' }));",
      ].join('\n'),
    );
    await add(registry, 'other');
    expect(Object.keys(await onDisk(file))).toEqual(['other']);
    expect(registry.get('doomed')).toBeUndefined();
  });

  it('EC1: an edit in place by another writer (not a rename) is seen at the next change', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    const registry = await openRegistry(scope);
    await add(registry, 'a');
    const text = JSON.stringify({
      version: '1.0',
      commands: { a: command('a'), hand_written: command('hand_written') },
    });
    await writeFile(file, text);
    await add(registry, 'b');
    expect(names(registry)).toEqual(['a', 'hand_written', 'b']);
  });

  it('EC4: a file another writer corrupted between changes is moved aside at the next change, with a notice', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    const registry = await openRegistry(scope);
    await add(registry, 'a');
    await writeFile(file, 'not json at all');
    await add(registry, 'b');
    expect(registry.notices).toHaveLength(1);
    expect(registry.notices[0]?.problem).toMatch(/^not JSON/);
    expect(await readFile(registry.notices[0]?.backup ?? '', 'utf8')).toBe('not json at all');
    expect(names(registry)).toEqual(['b']);
    expect(Object.keys(await onDisk(file))).toEqual(['b']);
  });

  it('EC1: a stale lock file left by a dead process is taken over by the next change', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    await writeFile(`${file}.lock`, String(deadPid()));
    const registry = await openRegistry(scope);
    await add(registry, 'after_stale_lock');
    expect(Object.keys(await onDisk(file))).toEqual(['after_stale_lock']);
    expect(await readdir(join(scope, '.ahma'))).toEqual(['registry.json']);
  });
});

describe('Registry: crashes', () => {
  it('NFR2: a process killed (SIGKILL) while changing the registry leaves a whole file holding every change it acknowledged', async () => {
    const scope = await newScope();
    const file = registryFile(scope);
    await mkdir(join(scope, '.ahma'));
    // A big file makes each write long enough for a kill to land inside one.
    const padding = 'x'.repeat(2000);
    const seed = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [
        `seed_${String(i)}`,
        command(`seed_${String(i)}`, { description: padding }),
      ]),
    );
    await writeFile(file, JSON.stringify({ version: '1.0', commands: seed }));
    for (let round = 0; round < 4; round++) {
      const child = startChild(
        [
          `const registry = await open(${JSON.stringify(file)}, ${JSON.stringify(scope)});`,
          'for (let i = 0; ; i++) {',
          `  const name = 'r${String(round)}_' + i;`,
          "  await registry.change((draft) => draft.add({ name, exec: './tool.sh', description: 'd' }));",
          "  process.stdout.write(name + '\\n');",
          '}',
        ].join('\n'),
      );
      // Wait for a first acknowledged change, then kill at an arbitrary moment. A child's start
      // (node, the built package, an 800 kB registry) takes seconds on two loaded cores.
      const deadline = Date.now() + 30_000;
      while (!(await readFile(file, 'utf8')).includes(`"r${String(round)}_0"`)) {
        if (Date.now() > deadline) throw new Error('the child made no change');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.floor(Math.random() * 150)));
      child.kill('SIGKILL');
      const result = await child.done;
      expect(result.signal, result.stderr).toBe('SIGKILL');
      // Whole, valid, and holding every change the child reported done.
      const commands = await onDisk(file);
      const acknowledged = result.stdout.split('\n').filter((line) => line !== '');
      for (const name of acknowledged) expect(commands[name], name).toBeDefined();
      const registry = await openRegistry(scope);
      expect(registry.notices).toEqual([]);
      expect(registry.entries.every((entry) => entry.kind === 'command')).toBe(true);
      // Its leftovers (a temporary, the lock) do not outlive the next open and change.
      await add(registry, `after_${String(round)}`);
      expect(await readdir(join(scope, '.ahma'))).toEqual(['registry.json']);
    }
  }, 120_000);
});
