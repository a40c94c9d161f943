// Red team, the command registry (SPEC §8, NFR4.1, R7.6). A registered command runs with the
// server's rights inside the sandbox, and whatever can write the registry file can add commands:
// a hostile command can do both, so neither may get it out of the sandbox. And the server itself
// writes the registry file and exports in the scope, where a command can swap a directory for a
// symlink to outside: the server must never write through it on the command's behalf.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import {
  confined,
  eachIdentity,
  redTeamFile,
  structured,
  textOf,
  treeState,
  type CommandResult,
  type Server,
} from './harness.js';

const file = redTeamFile(['swap-race']);

/** A registered shell: `sh -c SCRIPT`, the script passed after its flag. */
const REGISTERED_SHELL = {
  exec: '/bin/sh',
  description: 'A shell the agent registered',
  args: { script: { type: 'string', flag: '-c', required: true } },
};

async function add(server: Server, command: Record<string, unknown>) {
  return server.call('add_command', command);
}

eachIdentity('as $name', (identity) => {
  // .ahma is a hand-off path (R7.11), read-only to commands by default; these attacks are on the
  // server's own writes, which must hold even where the operator opened .ahma to commands.
  const { seat, server: current } = confined(file, identity, {
    args: ['--registry', '--allow-handoff-writes', '.ahma'],
    perTest: true,
  });
  // Each test starts on a scope without registry files: the attacks leave links behind.
  afterEach(async () => {
    if (identity.skip !== undefined) return;
    for (const name of await readdir(seat().scope)) {
      if (name.startsWith('.ahma'))
        await rm(join(seat().scope, name), { recursive: true, force: true });
    }
    for (const name of await readdir(seat().outside)) {
      await rm(join(seat().outside, name), { recursive: true, force: true });
    }
  });

  it('NFR4.1: a registered shell runs confined like every command: it cannot write outside the scope', async () => {
    const server = current();
    const victim = await seat().write(join(seat().outside, 'victim.txt'), 'precious\n');
    const before = await treeState(seat().outside);
    const added = await add(server, { name: 'my_shell', ...REGISTERED_SHELL });
    expect(added.isError, textOf(added)).toBeUndefined();
    const inside = structured<CommandResult>(
      await server.call('my_shell', { script: `echo ok > ${join(seat().scope, 'inside.txt')}` }),
    );
    expect(inside.status).toBe('completed');
    const attack = structured<CommandResult>(
      await server.call('my_shell', {
        script: `echo pwned > ${victim}; echo pwned > ${join(seat().outside, 'new.txt')}`,
      }),
    );
    expect(attack.status).toBe('failed');
    expect(attack.output).toMatch(/Permission denied|Read-only file system/);
    expect(await treeState(seat().outside)).toEqual(before);
  });

  it('NFR4.1: a command that writes the registry file adds a command, and that command is as confined as its writer', async () => {
    const server = current();
    const before = await treeState(seat().outside);
    const planted = JSON.stringify({
      version: '1.0',
      commands: { planted: { name: 'planted', ...REGISTERED_SHELL } },
    });
    const write = await server.sh(
      `mkdir -p .ahma && printf '%s' '${planted}' > .ahma/registry.json && echo written`,
    );
    expect(write.output).toContain('written');
    // The server reads the file again at its next change and then serves what it found.
    await add(server, { name: 'trigger', exec: '/bin/true', description: 'reload' });
    const names = (await server.client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('planted');
    const attack = structured<CommandResult>(
      await server.call('planted', { script: `echo pwned > ${join(seat().outside, 'x.txt')}` }),
    );
    expect(attack.status).toBe('failed');
    expect(await treeState(seat().outside)).toEqual(before);
  });

  it('R7.6: the registry directory swapped for a symlink to outside: the server refuses to write, and nothing outside changes', async () => {
    const server = current();
    await add(server, { name: 'first', exec: '/bin/true', description: 'first' });
    const before = await treeState(seat().outside);
    const swap = await server.sh(
      `mv .ahma .ahma-moved && ln -s ${seat().outside} .ahma && echo swapped`,
    );
    expect(swap.output).toContain('swapped');
    const refused = await add(server, { name: 'second', exec: '/bin/true', description: 'x' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^\[REGISTRY_WRITE_FAILED\] .*now resolves to/s);
    const exported = await server.call('export_config', {});
    expect(exported.isError).toBe(true);
    expect(await treeState(seat().outside)).toEqual(before);
  });

  it('R7.11: by default the registry directory is a hand-off path: a command cannot move it away, nor write the registry', async () => {
    const server = await seat().server(['--registry']);
    try {
      await add(server, { name: 'first', exec: '/bin/true', description: 'first' });
      const swap = await server.sh(
        `mv .ahma .ahma-moved && ln -s ${seat().outside} .ahma && echo swapped; echo '{}' > .ahma/registry.json && echo written`,
      );
      expect(swap.output).not.toContain('swapped');
      expect(swap.output).not.toContain('written');
      // The agent still registers through the server, which writes it itself.
      const second = await add(server, { name: 'second', exec: '/bin/true', description: 'x' });
      expect(second.isError, textOf(second)).not.toBe(true);
    } finally {
      await server.close();
    }
  });

  it('R7.6: the registry directory exchanged with a symlink to outside, again and again, while the agent registers and exports: the server never writes outside', async () => {
    const server = current();
    await add(server, { name: 'base', exec: '/bin/true', description: 'base' });
    const before = await treeState(seat().outside);
    // A command that exchanges .ahma with a symlink to outside (renameat2 RENAME_EXCHANGE) every
    // 200 µs while the agent registers and exports.
    const flipper = await server.start(
      `ln -s ${seat().outside} .ahma-link && ${seat().x('swap-race', '.ahma', '.ahma-link', 30, 200)}`,
      { timeout_seconds: 60 },
    );
    const outcomes: string[] = [];
    for (let round = 0; round < 40; round++) {
      const added = await add(server, {
        name: `raced_${String(round)}`,
        exec: '/bin/true',
        description: 'raced',
      });
      outcomes.push(added.isError === true ? (/^\[(\w+)\]/.exec(textOf(added))?.[1] ?? '?') : 'ok');
      const exported = await server.call('export_config', {});
      outcomes.push(
        exported.isError === true ? (/^\[(\w+)\]/.exec(textOf(exported))?.[1] ?? '?') : 'ok',
      );
    }
    await server.cancel(flipper);
    // Every call either worked inside the scope or was refused; none wrote outside.
    for (const outcome of outcomes) {
      expect(['ok', 'REGISTRY_WRITE_FAILED', 'CONFIG_INVALID', 'PATH_OUTSIDE_SCOPE']).toContain(
        outcome,
      );
    }
    expect(await treeState(seat().outside)).toEqual(before);
  });

  it('R7.6: export_config over a symlink to an outside file is refused and the file keeps its bytes', async () => {
    const server = current();
    const victim = await seat().write(join(seat().outside, 'victim.yaml'), 'precious\n');
    const before = await treeState(seat().outside);
    await server.sh(`mkdir -p .ahma && ln -sf ${victim} .ahma/commands.yaml`);
    await add(server, { name: 'some', exec: '/bin/true', description: 'x' });
    const exported = await server.call('export_config', {});
    expect(exported.isError).toBe(true);
    expect(textOf(exported)).toMatch(/^\[PATH_OUTSIDE_SCOPE\]/);
    expect(await treeState(seat().outside)).toEqual(before);
  });

  it("R7.6: symlinks to an outside file planted at the lock's name and a guessed temporary's are never written through", async () => {
    const server = current();
    const victim = await seat().write(join(seat().outside, 'victim.txt'), 'precious\n');
    const before = await treeState(seat().outside);
    await add(server, { name: 'first', exec: '/bin/true', description: 'x' });
    // The lock's name is known; a temporary's carries 8 random hex digits a command cannot
    // know, so it can only guess (here: the server's pid, zeros).
    const planted = await server.sh(
      [
        `ln -s ${victim} .ahma/registry.json.lock`,
        `ln -s ${victim} .ahma/registry.json.tmp-${String(server.pid)}-00000000`,
        'echo planted',
      ].join('\n'),
    );
    expect(planted.output).toContain('planted');
    for (const name of ['second', 'third']) {
      const added = await add(server, { name, exec: '/bin/true', description: 'x' });
      expect(added.isError, textOf(added)).toBeUndefined();
    }
    expect(await treeState(seat().outside)).toEqual(before);
    const listed = structured<{ commands: { name: string }[] }>(await server.call('list_commands'));
    expect(listed.commands.map((c) => c.name)).toEqual(['first', 'second', 'third']);
  });

  it('R7.6: a FIFO planted at the lock file or the registry file does not hang the registry', async () => {
    const server = current();
    await add(server, { name: 'one', exec: '/bin/true', description: 'x' });
    await server.sh('mkfifo .ahma/registry.json.lock && echo planted');
    const started = Date.now();
    const added = await server.call('add_command', {
      name: 'two',
      exec: '/bin/true',
      description: 'x',
    });
    expect(added.isError, textOf(added)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(10_000);
    await server.sh('rm -f .ahma/registry.json && mkfifo .ahma/registry.json');
    const again = await server.call('add_command', {
      name: 'three',
      exec: '/bin/true',
      description: 'x',
    });
    // The FIFO is no registry: it is moved aside like a corrupt file, and the change is made.
    expect(again.isError, textOf(again)).toBeUndefined();
    expect(textOf(await server.call('list_commands'))).toMatch(/registry\.json\.corrupt-/);
  });
});
