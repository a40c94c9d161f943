// SPEC §8 with the built server: the command registry's file survives SIGKILL at any instant
// (FR5, NFR2), a corrupt file is moved aside and reported (EC4), concurrent changes from one or two
// servers are all kept (EC1), and registered commands survive a restart. Real binary, real SDK
// Client over stdio, real sandbox; the registry file is read straight from disk. The crash test
// annotates its counts (lifetimes, writes, kills with a change in flight, stale locks and
// temporaries); --reporter=verbose shows them. The tests run at once, each with its own scope.
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect } from 'vitest';
import {
  exists,
  it,
  readLog,
  sleep,
  structured,
  textOf,
  waitFor,
  type CommandResult,
  type E2E,
  type RunningServer,
  type Scope,
} from '../support/harness.js';

const REGISTRY = ['--registry'];
const FILE_NAME = 'registry.json';
const TEMP_MARK = `${FILE_NAME}.tmp-`;

/** What the registry file stores for a command (parseCommand's normal form). */
interface StoredArgument {
  readonly type: 'string' | 'number' | 'integer' | 'boolean';
  readonly description?: string;
  readonly required?: true;
  readonly flag?: string;
}
interface StoredCommand {
  readonly name: string;
  readonly exec: string;
  readonly args?: Record<string, StoredArgument>;
  readonly description?: string;
  readonly async?: true;
  readonly timeout?: string;
}
/** The file's `commands`: name → command, in registration order. */
type Commands = Record<string, StoredCommand>;

interface Listing {
  readonly file: string;
  readonly commands: (StoredCommand & { shadowedBy?: string })[];
  readonly rejected: { name: string; problem: string }[];
  readonly notices: { problem: string; backup: string }[];
}

/** Prints its arguments one per line, so a call shows the argv it got. */
const ARGS_SCRIPT = '#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a"; done\n';

async function registryScope(e2e: E2E): Promise<Scope> {
  const scope = await e2e.scope({ noTools: true });
  await mkdir(join(scope.dir, 'scripts'));
  await writeFile(join(scope.dir, 'scripts', 'args.sh'), ARGS_SCRIPT);
  await chmod(join(scope.dir, 'scripts', 'args.sh'), 0o755);
  return scope;
}

const ahmaDir = (scope: Scope) => join(scope.dir, '.ahma');
const registryFile = (scope: Scope) => join(ahmaDir(scope), FILE_NAME);

/** The registry file as it is on disk; undefined when there is none. */
async function readRegistry(
  scope: Scope,
): Promise<{ text: string; version: unknown; commands: Commands } | undefined> {
  const text = await readFile(registryFile(scope), 'utf8').catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  });
  if (text === undefined) return undefined;
  const document = JSON.parse(text) as { version: unknown; commands: Commands };
  return { text, version: document.version, commands: document.commands };
}

async function listed(server: RunningServer): Promise<Listing> {
  const result = await server.call('list_commands');
  expect(result.isError, textOf(result)).toBeFalsy();
  return structured<Listing>(result);
}

/** The listed commands as the file stores them (without what the listing adds). */
function listedCommands(listing: Listing): Commands {
  return Object.fromEntries(
    listing.commands.map(({ shadowedBy: _shadowedBy, ...command }) => [command.name, command]),
  );
}

function expectOk(result: CallToolResult): void {
  expect(result.isError, textOf(result)).toBeFalsy();
}

// ---------------------------------------------------------------------------------------------
// The crash test's model: seeded random changes and the registry state each one leads to.

/** mulberry32: a small seeded generator, so a failing run replays with its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// A new seed every run, in the test's name; AHMA_TEST_SEED=<seed> replays a run's changes and kill
// delays (the kills' exact instants depend on timing). The servers never see it (childEnv drops
// AHMA_* variables).
const SEED = Number(process.env['AHMA_TEST_SEED'] ?? randomInt(2 ** 31));

/** One registry change as the test sends it, with the state it must lead to. */
interface Change {
  readonly tool: 'add_command' | 'update_command' | 'remove_command' | 'batch_exec';
  readonly args: Record<string, unknown>;
  readonly before: Commands;
  readonly after: Commands;
  /** The call answers isError (a batch with a failing operation). */
  readonly error: boolean;
}

const EXECS = ['echo', 'true', '/bin/sh', './scripts/args.sh'];
const ARGUMENT_NAMES = ['file', 'count', 'mode', 'verbose', 'level', 'target'];
const TYPES = ['string', 'number', 'integer', 'boolean'] as const;
const FLAGS = ['-a', '-b', '--out', '--level', '-n'];
const TIMEOUTS = ['30s', '5m', '1h30m', '2h'];

class ChangeMaker {
  readonly #random: () => number;
  #serial = 0;

  constructor(seed: number) {
    this.#random = generator(seed);
  }

  int(below: number): number {
    return Math.floor(this.#random() * below);
  }

  chance(p: number): boolean {
    return this.#random() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** A random change that is valid on `state`. */
  next(state: Commands): Change {
    const names = Object.keys(state);
    const roll = this.#random();
    if (names.length === 0 || roll < 0.3) {
      const command = this.#command(`c${String(++this.#serial)}`);
      return this.#single('add_command', { ...command }, state, add(state, command));
    }
    if (roll < 0.55) {
      const params = this.#update(state[this.pick(names)] as StoredCommand);
      return this.#single('update_command', params, state, update(state, params));
    }
    if (roll < 0.72 || names.length > 30) {
      const name = this.pick(names);
      return this.#single('remove_command', { name }, state, remove(state, name));
    }
    return this.#batch(state);
  }

  #single(tool: Change['tool'], args: Record<string, unknown>, before: Commands, after: Commands) {
    return { tool, args, before, after, error: false };
  }

  #batch(before: Commands): Change {
    const atomic = this.chance(0.6);
    const count = 2 + this.int(4);
    const failAt = this.chance(0.2) ? this.int(count) : -1;
    const operations: { operation: string; params: Record<string, unknown> }[] = [];
    let state = before;
    for (let index = 0; index < count; index += 1) {
      if (index === failAt) {
        // No such command: this operation fails (an atomic batch then keeps none of them).
        operations.push({ operation: 'remove_command', params: { name: 'ghost_command' } });
        continue;
      }
      const names = Object.keys(state);
      const roll = this.#random();
      if (names.length === 0 || roll < 0.45) {
        const command = this.#command(`c${String(++this.#serial)}`);
        operations.push({ operation: 'add_command', params: { ...command } });
        state = add(state, command);
      } else if (roll < 0.8) {
        const params = this.#update(state[this.pick(names)] as StoredCommand);
        operations.push({ operation: 'update_command', params });
        state = update(state, params);
      } else {
        const name = this.pick(names);
        operations.push({ operation: 'remove_command', params: { name } });
        state = remove(state, name);
      }
    }
    const failed = failAt >= 0;
    return {
      tool: 'batch_exec',
      args: { commands: operations, atomic },
      before,
      after: failed && atomic ? before : state,
      error: failed,
    };
  }

  #command(name: string): StoredCommand {
    return {
      name,
      exec: this.pick(EXECS),
      description: `Command ${name}: ${'x'.repeat(this.int(40))}`,
      ...(this.chance(0.6) ? { args: this.#arguments() } : {}),
      ...(this.chance(0.3) ? { async: true as const } : {}),
      ...(this.chance(0.3) ? { timeout: this.pick(TIMEOUTS) } : {}),
    };
  }

  #arguments(): Record<string, StoredArgument> {
    const args: Record<string, StoredArgument> = {};
    const flags = [...FLAGS];
    const count = 1 + this.int(3);
    for (let index = 0; index < count; index += 1) {
      const name = this.pick(ARGUMENT_NAMES);
      if (Object.hasOwn(args, name)) continue;
      const flag = this.chance(0.4) ? flags.splice(this.int(flags.length), 1)[0] : undefined;
      args[name] = {
        type: this.pick(TYPES),
        ...(this.chance(0.5) ? { description: `the ${name}` } : {}),
        ...(this.chance(0.3) ? { required: true as const } : {}),
        ...(flag === undefined ? {} : { flag }),
      };
    }
    return args;
  }

  /** update_command's params for `command`: new values for some fields, null unsets some. */
  #update(command: StoredCommand): Record<string, unknown> {
    const params: Record<string, unknown> = {
      name: command.name,
      description: `Updated ${command.name} #${String(this.int(1000))}`,
    };
    if (this.chance(0.3)) params['exec'] = this.pick(EXECS);
    if (this.chance(0.3)) params['args'] = this.chance(0.3) ? null : this.#arguments();
    if (this.chance(0.3)) params['async'] = command.async === true ? null : true;
    if (this.chance(0.3)) params['timeout'] = this.chance(0.4) ? null : this.pick(TIMEOUTS);
    return params;
  }
}

function add(state: Commands, command: StoredCommand): Commands {
  return { ...state, [command.name]: command };
}

/** update_command: the given fields replace the command's, null unsets one; its place is kept. */
function update(state: Commands, params: Record<string, unknown>): Commands {
  const name = params['name'] as string;
  const merged = Object.fromEntries(
    Object.entries({ ...state[name], ...params, name }).filter(([, value]) => value !== null),
  ) as unknown as StoredCommand;
  return { ...state, [name]: merged };
}

function remove(state: Commands, name: string): Commands {
  return Object.fromEntries(Object.entries(state).filter(([key]) => key !== name));
}

const changed = (change: Change) => !isDeepStrictEqual(change.before, change.after);

async function temporaries(scope: Scope): Promise<string[]> {
  return (await readdir(ahmaDir(scope))).filter((name) => name.startsWith(TEMP_MARK));
}

// ---------------------------------------------------------------------------------------------

describe.concurrent(
  'FR5/NFR2: the registry file survives SIGKILL at any instant',
  { timeout: 60_000 },
  () => {
    it(`FR5, NFR2: 100+ changes over many server lifetimes, each ended by SIGKILL at a random instant, leave the file at a whole state (seed ${String(SEED)}; rerun with AHMA_TEST_SEED=${String(SEED)})`, async ({
      annotate,
      e2e,
    }) => {
      const TARGET_WRITES = 120;
      const MIN_LIFETIMES = 12;
      // A lifetime costs a server start, a change a few milliseconds: each lifetime makes about a
      // tenth of the writes, so that the target takes about the minimum of lifetimes.
      const maker = new ChangeMaker(SEED);
      const scope = await registryScope(e2e);
      const file = registryFile(scope);
      const lock = `${file}.lock`;
      const stats = {
        lifetimes: 0,
        changesSent: 0,
        writesAcknowledged: 0,
        inFlightAtKill: 0,
        inFlightLanded: 0,
        lockLeftByKill: 0,
        tempLeftByKill: 0,
        lockPlanted: 0,
        tempPlanted: 0,
        lockTakenOver: 0,
      };
      /** The last acknowledged state: what the file must hold when no change is in flight. */
      let state: Commands = {};
      let everWritten = false;
      const where = () =>
        `seed ${String(SEED)}, lifetime ${String(stats.lifetimes)} (AHMA_TEST_SEED=${String(SEED)} replays the changes)`;

      /** Sends `change`, checks its answer and makes its state the acknowledged one. */
      const acknowledge = (change: Change, result: CallToolResult) => {
        expect(
          result.isError === true,
          `${where()}: ${change.tool} answered ${textOf(result)}`,
        ).toBe(change.error);
        state = change.after;
        if (changed(change)) {
          stats.writesAcknowledged += 1;
          everWritten = true;
        }
      };

      while (stats.writesAcknowledged < TARGET_WRITES || stats.lifetimes < MIN_LIFETIMES) {
        stats.lifetimes += 1;
        const lockBefore = existsSync(lock);
        const server = await e2e.server(scope, REGISTRY);

        // Open removed the temporary files of writes that died before their rename.
        expect(await temporaries(scope), where()).toEqual([]);
        // The new server serves exactly the file's state.
        const listing = await listed(server);
        expect(listing.notices, where()).toEqual([]);
        expect(listedCommands(listing), where()).toEqual(state);

        let killed = false;
        const kill = () => {
          killed = true;
          process.kill(server.pid, 'SIGKILL');
        };
        let inFlight: Change | undefined;
        const send = (change: Change) => {
          stats.changesSent += 1;
          inFlight = change;
          return server.call(change.tool, change.args);
        };

        // The first change of a lifetime takes over the lock a killed server left.
        if (lockBefore) {
          stats.lockTakenOver += 1;
          const change = maker.next(state);
          acknowledge(change, await send(change));
          inFlight = undefined;
          expect(existsSync(lock), `${where()}: the stale lock was not released`).toBe(false);
        }

        if (maker.chance(0.5)) {
          // A few changes, then one more sent and the server killed 0–5 ms later.
          const before = 2 + maker.int(20);
          for (let index = 0; index < before; index += 1) {
            const change = maker.next(state);
            acknowledge(change, await send(change));
            inFlight = undefined;
          }
          const change = maker.next(state);
          const answer = send(change).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          await sleep(maker.int(6));
          kill();
          const outcome = await answer;
          if ('result' in outcome) {
            acknowledge(change, outcome.result);
            inFlight = undefined;
          }
        } else {
          // A stream of changes, one after another, and the server killed by a timer in between.
          const timer = setTimeout(kill, 5 + maker.int(300));
          try {
            for (let count = 0; !killed && count < 80; count += 1) {
              const change = maker.next(state);
              const result = await send(change);
              acknowledge(change, result);
              inFlight = undefined;
            }
          } catch (error) {
            if (!killed) throw error;
          }
          clearTimeout(timer);
          if (!killed) kill();
        }
        await waitFor(() => !exists(server.pid), 'the killed server to be gone');
        await server.close();

        // The file holds the acknowledged state, or the state of the one change in flight.
        const allowed = inFlight === undefined ? [state] : [state, inFlight.after];
        if (inFlight !== undefined) stats.inFlightAtKill += 1;
        const onDisk = await readRegistry(scope).catch((error: unknown) =>
          expect.fail(`${where()}: the registry file after the kill is not JSON: ${String(error)}`),
        );
        if (onDisk === undefined) {
          expect(everWritten, `${where()}: the registry file is gone`).toBe(false);
        } else {
          expect(onDisk.version, where()).toBe('1.0');
          const match = allowed.findIndex((candidate) =>
            isDeepStrictEqual(onDisk.commands, candidate),
          );
          if (match === -1) {
            expect(
              onDisk.commands,
              `${where()}: the file after the kill is neither the acknowledged state nor the state after the change in flight (${JSON.stringify(inFlight?.args)})`,
            ).toEqual(allowed.at(-1));
          }
          // Registration order is kept too.
          expect(Object.keys(onDisk.commands), where()).toEqual(Object.keys(allowed[match] ?? {}));
          if (match === 1 && inFlight !== undefined) {
            stats.inFlightLanded += 1;
            if (changed(inFlight)) everWritten = true;
            state = inFlight.after;
          }
        }

        // What the kill left: a lock holding the killed server's pid, temporary files of its pid.
        const temps = await temporaries(scope);
        if (existsSync(lock)) {
          stats.lockLeftByKill += 1;
          // "PID TOKEN" (or empty: killed between creating and writing it).
          const holder = (await readFile(lock, 'utf8')).split(' ')[0];
          expect(['', String(server.pid)], where()).toContain(holder);
        } else if (stats.lifetimes % 2 === 1) {
          // As a kill inside a change leaves it: every other restart takes over a stale lock.
          stats.lockPlanted += 1;
          await writeFile(lock, String(server.pid));
        }
        if (temps.length > 0) {
          stats.tempLeftByKill += 1;
          for (const temp of temps) expect(temp, where()).toMatch(`.tmp-${String(server.pid)}-`);
        } else if (stats.lifetimes % 2 === 1) {
          // As a kill inside a write leaves it: every other restart removes a stale temporary.
          stats.tempPlanted += 1;
          await writeFile(`${file}.tmp-${String(server.pid)}-0badf00d`, '{"version": "1.0", "comm');
        }
      }

      // A last server serves the final state, and a clean change keeps it whole.
      const last = await e2e.server(scope, REGISTRY);
      expect(await temporaries(scope)).toEqual([]);
      expect(listedCommands(await listed(last))).toEqual(state);
      const change = maker.next(state);
      acknowledge(change, await last.call(change.tool, change.args));
      expect(existsSync(lock)).toBe(false);
      expect((await readRegistry(scope))?.commands).toEqual(state);

      await annotate(`seed ${String(SEED)}: ${JSON.stringify(stats)}`);
      expect(stats.writesAcknowledged).toBeGreaterThanOrEqual(TARGET_WRITES);
      expect(stats.inFlightAtKill).toBeGreaterThan(0);
      expect(stats.lockTakenOver).toBeGreaterThan(0);
      expect(stats.tempLeftByKill + stats.tempPlanted).toBeGreaterThan(0);
    }, 120_000);
  },
);

describe.concurrent('EC4: a corrupt registry file', { timeout: 60_000 }, () => {
  const BACKUP = /^registry\.json\.corrupt-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2}\.\d{3})Z$/;

  it.for([
    {
      what: 'bytes that are not JSON (a torn write, invalid UTF-8, NUL)',
      garbage: Buffer.concat([
        Buffer.from('{"version": "1.0", "commands": {"half": {"name": "ha'),
        Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x0a, 0x7b, 0xc3]),
      ]),
      problem: 'not JSON',
    },
    {
      what: 'JSON that is not a registry',
      garbage: Buffer.from('["not", "a", "registry"]\n'),
      problem: 'not a JSON object',
    },
  ])(
    'EC4: $what: the file is moved to a timestamped backup byte for byte, reported in the log, list_commands and help; the registry starts empty and the next add_command writes a fresh file',
    { timeout: 30_000 },
    async ({ garbage, problem }, { e2e }) => {
      const scope = await registryScope(e2e);
      const file = registryFile(scope);
      await writeFile(file, garbage);
      const startedAt = Date.now();
      const server = await e2e.server(scope, REGISTRY);
      const readyAt = Date.now();

      // Moved aside, byte for byte, under a name saying when.
      expect(existsSync(file)).toBe(false);
      const backups = (await readdir(ahmaDir(scope))).filter((name) => BACKUP.test(name));
      expect(backups).toHaveLength(1);
      const backupName = backups[0] ?? '';
      const backup = join(ahmaDir(scope), backupName);
      expect(Buffer.compare(await readFile(backup), garbage)).toBe(0);
      const [, day, hours, minutes, seconds] = BACKUP.exec(backupName) ?? [];
      const movedAt = Date.parse(`${day}T${hours}:${minutes}:${seconds}Z`);
      expect(movedAt).toBeGreaterThanOrEqual(startedAt - 1);
      expect(movedAt).toBeLessThanOrEqual(readyAt);

      // Reported: list_commands (structured and text), help and the log.
      const result = await server.call('list_commands');
      expectOk(result);
      const listing = structured<Listing>(result);
      expect(listing.commands).toEqual([]);
      expect(listing.rejected).toEqual([]);
      expect(listing.notices).toEqual([{ problem: expect.stringContaining(problem), backup }]);
      expect(textOf(result)).toContain(`could not be read (${listing.notices[0]?.problem ?? ''})`);
      expect(textOf(result)).toContain(`moved to ${backup}`);
      const help = await server.call('help');
      expectOk(help);
      expect(textOf(help)).toContain(`moved to ${backup}`);
      expect(textOf(help)).toContain('(0 command(s) registered)');
      const logged = await waitFor(
        async () =>
          (await readLog(scope)).lines.find(
            (line) => line['backup'] === backup && line['level'] === 40,
          ),
        'the log line about the corrupt registry file',
      );
      expect(logged['problem']).toBe(listing.notices[0]?.problem);
      expect(String(logged['msg'])).toContain('moved aside');

      // Served empty: no registered tool; the next change writes a fresh, valid file.
      const before = (await server.client.listTools()).tools.map((tool) => tool.name);
      expect(before).not.toContain('half');
      expectOk(
        await server.call('add_command', {
          name: 'fresh',
          exec: 'echo',
          description: 'Echo its word',
          args: { word: { type: 'string' } },
        }),
      );
      const written = await readRegistry(scope);
      expect(written?.version).toBe('1.0');
      expect(written?.commands).toEqual({
        fresh: {
          name: 'fresh',
          exec: 'echo',
          description: 'Echo its word',
          args: { word: { type: 'string' } },
        },
      });
      expect(Buffer.compare(await readFile(backup), garbage)).toBe(0);
      expect((await server.client.listTools()).tools.map((tool) => tool.name)).toContain('fresh');
    },
  );
});

describe.concurrent('EC1: concurrent changes are all kept', { timeout: 60_000 }, () => {
  const addArgs = (name: string) => ({
    name,
    exec: 'echo',
    description: `Echo for ${name}`,
    args: { word: { type: 'string' } },
  });

  it('EC1: 20 add_command calls sent at once to one server are all registered, listed and in the file', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const server = await e2e.server(scope, REGISTRY);
    const names = Array.from({ length: 20 }, (_, index) => `burst_${String(index)}`);
    const calls = names.map((name) => server.call('add_command', addArgs(name)));
    for (const result of await Promise.all(calls)) expectOk(result);

    const listing = await listed(server);
    expect(listing.commands.map((command) => command.name).sort()).toEqual([...names].sort());
    const onDisk = await readRegistry(scope);
    expect(onDisk?.version).toBe('1.0');
    expect(Object.keys(onDisk?.commands ?? {}).sort()).toEqual([...names].sort());
    for (const name of names) expect(onDisk?.commands[name]).toEqual(addArgs(name));
    const tools = (await server.client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(names));
    expect(existsSync(`${registryFile(scope)}.lock`)).toBe(false);
    expect(await temporaries(scope)).toEqual([]);
  }, 30_000);

  it('EC1: two servers sharing one registry file, each adding 10 commands at once, keep all 20; a further change on either lists all 21', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const [first, second] = await Promise.all([
      e2e.server(scope, REGISTRY),
      e2e.server(scope, REGISTRY),
    ]);
    const firstNames = Array.from({ length: 10 }, (_, index) => `first_${String(index)}`);
    const secondNames = Array.from({ length: 10 }, (_, index) => `second_${String(index)}`);
    // Interleaved, none awaited: both servers change the file at the same time.
    const calls = firstNames.flatMap((name, index) => [
      first.call('add_command', addArgs(name)),
      second.call('add_command', addArgs(secondNames[index] ?? '')),
    ]);
    for (const result of await Promise.all(calls)) expectOk(result);

    // A server reads the other's changes at its next change, so the file is the witness.
    const all = [...firstNames, ...secondNames].sort();
    const onDisk = await readRegistry(scope);
    expect(onDisk?.version).toBe('1.0');
    expect(Object.keys(onDisk?.commands ?? {}).sort()).toEqual(all);
    for (const name of all) expect(onDisk?.commands[name]).toEqual(addArgs(name));
    expect(existsSync(`${registryFile(scope)}.lock`)).toBe(false);
    expect(await temporaries(scope)).toEqual([]);

    // One more on the first server: it lists the second's ten too.
    expectOk(await first.call('add_command', addArgs('one_more')));
    const all21 = [...all, 'one_more'].sort();
    const names = (listing: Listing) => listing.commands.map((command) => command.name).sort();
    expect(names(await listed(first))).toEqual(all21);
    // A change on the second server (an update): it lists the first's eleven too, and serves them.
    expectOk(
      await second.call('update_command', { name: 'first_0', description: 'Updated by second' }),
    );
    const secondListing = await listed(second);
    expect(names(secondListing)).toEqual(all21);
    expect(secondListing.commands.find((c) => c.name === 'first_0')?.description).toBe(
      'Updated by second',
    );
    const tools = (await second.client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(all21));
    const final = await readRegistry(scope);
    expect(Object.keys(final?.commands ?? {}).sort()).toEqual(all21);
    expect(final?.commands['first_0']?.description).toBe('Updated by second');
  }, 30_000);
});

describe.concurrent('FR5: registered commands survive a restart', { timeout: 60_000 }, () => {
  it('FR5: commands registered before a restart are listed and callable at once after it; arguments reach the executable in declared order', async ({
    e2e,
  }) => {
    const scope = await registryScope(e2e);
    const showArgs = {
      name: 'show_args',
      exec: './scripts/args.sh',
      description: 'Print each argument on its own line',
      args: {
        zeta: { type: 'string', required: true },
        alpha: { type: 'integer' },
        mode: { type: 'string', flag: '--mode' },
        verbose: { type: 'boolean', flag: '-v' },
        last: { type: 'number' },
      },
    };
    const greet = {
      name: 'greet',
      exec: 'echo',
      description: 'Echo a greeting',
      args: { who: { type: 'string', required: true } },
      timeout: '30s',
    };
    const first = await e2e.server(scope, REGISTRY);
    expectOk(await first.call('add_command', showArgs));
    expectOk(await first.call('add_command', greet));
    await first.close();
    await waitFor(() => !exists(first.pid), 'the first server to exit');

    const second = await e2e.server(scope, REGISTRY);
    // Called before anything else: the arguments given in another order than declared.
    const called = await second.call('show_args', {
      last: 2.5,
      verbose: true,
      mode: 'fast',
      alpha: 7,
      zeta: 'first word',
    });
    expect(called.isError, textOf(called)).toBeFalsy();
    const result = structured<CommandResult>(called);
    expect(result.status).toBe('completed');
    expect(result.exit_code).toBe(0);
    expect(result.output).toBe('first word\n7\n--mode\nfast\n-v\n2.5\n');
    const greeted = structured<CommandResult>(await second.call('greet', { who: 'world' }));
    expect(greeted.output).toBe('world\n');

    expect(listedCommands(await listed(second))).toEqual({ show_args: showArgs, greet });
    const tool = (await second.client.listTools()).tools.find((t) => t.name === 'show_args');
    expect(Object.keys(tool?.inputSchema.properties ?? {}).slice(0, 5)).toEqual([
      'zeta',
      'alpha',
      'mode',
      'verbose',
      'last',
    ]);
    expect((await readRegistry(scope))?.commands).toEqual({ show_args: showArgs, greet });
  }, 30_000);
});
