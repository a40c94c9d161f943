// One change to the registry in the making: add, update and remove applied to a copy of its
// entries, each checked as it is applied (FR4.1–FR4.3). The registry persists the copy and swaps
// it in only when the whole change succeeded, so a failed check leaves the registry as it was.
import { closestMatch } from '../definition/suggest.js';
import { AhmaError } from '../errors.js';
import { COMMAND_NAME_PATTERN, isObject, parseCommand, type RegisteredCommand } from './command.js';
import { resolveExecutable, type ExecLookup } from './exec.js';
import type { RegistryEntry } from './registry-file.js';

export interface DraftRules {
  /** Why a name belongs to a tool outside the registry (a built-in, a tool file), or undefined. */
  readonly nameTaken: (name: string) => string | undefined;
  readonly lookup: ExecLookup;
}

export class RegistryDraft {
  readonly #entries: Map<string, RegistryEntry>;
  readonly #rules: DraftRules;
  #changed = false;
  #discarded = false;

  constructor(entries: ReadonlyMap<string, RegistryEntry>, rules: DraftRules) {
    this.#entries = new Map(entries);
    this.#rules = rules;
  }

  /** Whether there is anything to persist. */
  get changed(): boolean {
    return this.#changed && !this.#discarded;
  }

  /** Drops every change made so far (an atomic batch that failed part-way). */
  discard(): void {
    this.#discarded = true;
  }

  get entries(): ReadonlyMap<string, RegistryEntry> {
    return this.#entries;
  }

  /**
   * FR4.1: a new command; its name is free and its executable runs. The description is optional,
   * as in instant-mcp (whose README registers commands without one) and as import_config always
   * took them: without one, list_commands shows the exec and the tool says "Runs <exec>.".
   */
  async add(params: unknown): Promise<RegisteredCommand> {
    const command = parseCommand(params);
    const existing = this.#entries.get(command.name);
    if (existing !== undefined) {
      const broken = existing.kind === 'rejected' ? ' (it is invalid and not served)' : '';
      throw new AhmaError(
        'COMMAND_EXISTS',
        `command "${command.name}" already exists${broken}; use update_command to change it, or remove_command first`,
      );
    }
    this.#refuseTakenName(command.name);
    await resolveExecutable(command.exec, this.#rules.lookup);
    this.#set(command);
    return command;
  }

  /**
   * FR4.3: the given fields replace the command's (args as a whole); null unsets an optional one
   * (description included: add_command does not require one either).
   * A rejected entry is repaired this way. The executable is checked when it changes.
   */
  async update(params: unknown): Promise<RegisteredCommand> {
    if (!isObject(params)) throw new AhmaError('COMMAND_INVALID', 'update_command takes an object');
    const entry = this.#existing(params['name']);
    const base = entry.kind === 'command' ? entry.command : isObject(entry.raw) ? entry.raw : {};
    const merged = Object.fromEntries(
      Object.entries({ ...base, ...params, name: nameOf(entry) }).filter(([, v]) => v !== null),
    );
    const command = parseCommand(merged);
    if (entry.kind === 'rejected' || command.exec !== base['exec']) {
      await resolveExecutable(command.exec, this.#rules.lookup);
    }
    this.#set(command);
    return command;
  }

  /** FR4.2: the entry goes, valid or not. */
  remove(params: unknown): RegistryEntry {
    const entry = this.#existing(isObject(params) ? params['name'] : undefined);
    this.#entries.delete(nameOf(entry));
    this.#changed = true;
    return entry;
  }

  /** An imported command replacing whatever has its name (import_config with overwrite). */
  async put(command: RegisteredCommand): Promise<void> {
    if (!this.#entries.has(command.name)) this.#refuseTakenName(command.name);
    await resolveExecutable(command.exec, this.#rules.lookup);
    this.#set(command);
  }

  /** The entry `name` names, or COMMAND_UNKNOWN with the closest name. */
  #existing(name: unknown): RegistryEntry {
    if (typeof name !== 'string' || name === '') {
      throw new AhmaError('COMMAND_INVALID', 'name is required: the registered command to change');
    }
    const entry = this.#entries.get(name);
    if (entry !== undefined) return entry;
    // Checked first: the edit distance of a huge name to every command would stall the server.
    const close = COMMAND_NAME_PATTERN.test(name)
      ? closestMatch(name, this.#entries.keys())
      : undefined;
    throw new AhmaError(
      'COMMAND_UNKNOWN',
      `no registered command "${name}"${close === undefined ? '' : `; did you mean "${close}"?`} (list_commands lists them)`,
    );
  }

  #refuseTakenName(name: string): void {
    const owner = this.#rules.nameTaken(name);
    if (owner === undefined) return;
    throw new AhmaError('COMMAND_EXISTS', `"${name}" is already ${owner}; pick another name`);
  }

  #set(command: RegisteredCommand): void {
    this.#entries.set(command.name, { kind: 'command', command });
    this.#changed = true;
  }
}

export function nameOf(entry: RegistryEntry): string {
  return entry.kind === 'command' ? entry.command.name : entry.name;
}
