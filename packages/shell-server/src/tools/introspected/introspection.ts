// SPEC §15 `ahma-shell --introspect PROGRAM,…`: each program's tools, read from its --help in the
// sandbox (@ahma/introspect) and served like a tool file's, without a file in the project. What a
// program's help yielded is kept in the private state (cache.ts): a program seen before is served
// at start without being run. A program not seen before is read in the background after the first
// tool load, and its tools are added when they are ready (tools/list_changed); tools/list waits
// for that briefly (firstRead), the one-shot CLI as long as it takes. A program that is not found,
// whose help cannot be read or says nothing usable is said in the log, and the rest are served.
//
// Only a server given --introspect loads this module (runtime.ts imports it dynamically): the
// parsers stay out of every other start.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadTools, writeFileAtomicAt, type Environment } from '@ahma/core';
import { HelpNotFound, INTROSPECT_VERSION, introspect, toolName } from '@ahma/introspect';
import type { Logger } from 'pino';
import { cacheKey, IntrospectionCache, type CacheKey, type Outcome } from './cache.js';
import type { IntrospectedTools, LoadResult } from './merge.js';
import { resolveProgram, type ResolvedProgram } from './program.js';
import { leafCount, useful } from './shape.js';

/** Levels of subcommands read, as ahma-introspect's default (`docker container ls`). */
export const INTROSPECT_DEPTH = 2;
/** How long tools/list may wait, in all, for programs still being read (as for remote servers). */
export const FIRST_READ_WAIT_MS = 2_000;

export interface IntrospectionSettings {
  /** --introspect's programs: names on PATH or absolute paths. */
  readonly programs: readonly string[];
  /** The server's environment: its PATH finds the programs, and their help runs with it. */
  readonly env: Environment;
  /** The private state's root: the cache lives in it. */
  readonly stateRoot: string;
  /** This server's private directory: the definitions it serves are written there. */
  readonly serverDir: string;
  /** What a help command may not see, as any command: Ahma's secrets, --env-deny (R7.9). */
  readonly envDeny: readonly string[];
  readonly logger: Logger;
}

/** A program whose help is to be read. */
interface Pending {
  readonly program: ResolvedProgram;
  readonly name: string;
  readonly key: CacheKey;
}

export class Introspection implements IntrospectedTools {
  readonly #settings: IntrospectionSettings;
  /** Where the served definitions are, one file per program: loaded like a tools directory. */
  readonly #dir: string;
  readonly #cache: IntrospectionCache | undefined;
  /** Each served file, and the --introspect it came from (what logs and messages name). */
  readonly #labels = new Map<string, string>();
  readonly #pending: Pending[] = [];
  readonly #abort = new AbortController();
  #reading: Promise<void> | undefined;
  #waitEnds: number | undefined;

  private constructor(settings: IntrospectionSettings, dir: string, cache?: IntrospectionCache) {
    this.#settings = settings;
    this.#dir = dir;
    this.#cache = cache;
  }

  /** Finds the programs and serves those the cache knows; the others wait for readMissing. */
  static async start(settings: IntrospectionSettings): Promise<Introspection> {
    const dir = join(settings.serverDir, 'introspected');
    await mkdir(dir, { mode: 0o700 });
    const cache = await IntrospectionCache.open(settings.stateRoot).catch((error: unknown) => ({
      problem: String(error),
    }));
    if ('problem' in cache) {
      settings.logger.warn(
        `--introspect: no cache (${cache.problem}): every program's help is read at every start`,
      );
    }
    const introspection = new Introspection(settings, dir, 'problem' in cache ? undefined : cache);
    await introspection.#lookUp();
    return introspection;
  }

  async load(): Promise<LoadResult> {
    const loaded = await loadTools({ toolsDir: { dir: this.#dir, origin: 'default' } });
    const label = (file: string) => this.#labels.get(file) ?? file;
    return {
      ...loaded,
      definitions: loaded.definitions.map((entry) => ({ ...entry, file: label(entry.file) })),
      tools: loaded.tools.map((tool) => ({ ...tool, file: label(tool.file) })),
      diagnostics: loaded.diagnostics.map((problem) => ({ ...problem, file: label(problem.file) })),
    };
  }

  /**
   * Reads the help of the programs the cache did not know, one at a time in the background;
   * `reload` serves each one's tools as soon as they are read.
   */
  readMissing(reload: () => Promise<void>): void {
    if (this.#pending.length === 0 || this.#reading !== undefined) return;
    const pending = this.#pending.splice(0);
    this.#reading = (async () => {
      for (const each of pending) {
        const started = performance.now();
        const outcome = await this.#read(each);
        if (this.#abort.signal.aborted) return;
        if (outcome === undefined) continue;
        await this.#keep(each.key, each.program, outcome);
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        const served = await this.#serve(each.program, each.name, outcome, `read in ${seconds} s`);
        if (served && !this.#abort.signal.aborted) {
          await reload().catch((error: unknown) =>
            this.#settings.logger.error({ err: error }, 'reloading the tools failed'),
          );
        }
      }
    })().catch((error: unknown) => {
      // Nothing above should throw; if it does, the server goes on without the rest.
      this.#settings.logger.error({ err: error }, '--introspect: reading the programs failed');
    });
  }

  /**
   * Resolves when the programs being read are served, waiting FIRST_READ_WAIT_MS at most in all
   * (tools/list awaits it); `whole`: as long as it takes (the one-shot CLI).
   */
  async firstRead({ whole = false }: { readonly whole?: boolean } = {}): Promise<void> {
    const reading = this.#reading;
    if (reading === undefined) return;
    if (whole) return reading;
    this.#waitEnds ??= Date.now() + FIRST_READ_WAIT_MS;
    const left = this.#waitEnds - Date.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([reading, new Promise((done) => (timer = setTimeout(done, left)))]);
    clearTimeout(timer);
  }

  /** Stops the help being read (its command is cancelled) and waits for it. Idempotent. */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.#reading;
  }

  async #lookUp(): Promise<void> {
    const { logger, env } = this.#settings;
    const names = new Map<string, string>();
    for (const given of this.#settings.programs) {
      const found = await resolveProgram(given, env['PATH']);
      if ('problem' in found) {
        logger.warn({ program: given }, `--introspect ${given}: not served: ${found.problem}`);
        continue;
      }
      const name = toolName(given);
      const other = names.get(name);
      if (other !== undefined) {
        logger.warn(
          { program: given },
          `--introspect ${given}: not served: --introspect ${other} has its name, ${name}`,
        );
        continue;
      }
      names.set(name, given);
      const key = cacheKey(found, name, INTROSPECT_DEPTH, INTROSPECT_VERSION);
      const cached = await this.#cache?.read(key).catch((error: unknown) => ({
        kind: 'ignored' as const,
        why: String(error),
        file: this.#cache?.fileFor(key) ?? '',
      }));
      if (cached?.kind === 'hit') {
        await this.#serve(found, name, cached.outcome, `from the cache, ${cached.file}`);
        continue;
      }
      if (cached?.kind === 'ignored') {
        logger.warn(
          { program: given, file: cached.file },
          `--introspect ${given}: its cached reading ${cached.file} is not trusted (${cached.why}): its help is read again`,
        );
      }
      this.#pending.push({ program: found, name, key });
    }
  }

  /** What the program's help yields; undefined when it could not be read for a passing reason. */
  async #read({ program, name }: Pending): Promise<Outcome | undefined> {
    const { env, stateRoot, envDeny, logger } = this.#settings;
    try {
      const { definition } = await introspect(program.path, {
        depth: INTROSPECT_DEPTH,
        name,
        env,
        stateDir: stateRoot,
        envDeny,
        signal: this.#abort.signal,
      });
      if (!useful(definition)) {
        return { kind: 'refused', reason: 'its help lists no subcommand, option or argument' };
      }
      return { kind: 'tools', definition };
    } catch (error: unknown) {
      if (this.#abort.signal.aborted) return undefined;
      // The same file prints the same help: remembered, so the next start does not run it again.
      if (error instanceof HelpNotFound) return { kind: 'refused', reason: error.message };
      // The sandbox could not start, or the like: not the program's doing, so not remembered.
      logger.warn(
        { program: program.given, err: error },
        `--introspect ${program.given}: not served: its help could not be read (${messageOf(error)}); it is tried again at the next start`,
      );
      return undefined;
    }
  }

  async #keep(key: CacheKey, program: ResolvedProgram, outcome: Outcome): Promise<void> {
    if (this.#cache === undefined) return;
    try {
      const file = await this.#cache.write(key, outcome);
      this.#settings.logger.debug({ program: program.given, file }, '--introspect: cached');
    } catch (error) {
      this.#settings.logger.warn(
        { program: program.given, err: error },
        `--introspect ${program.given}: what its help yielded could not be cached: it is read again at the next start`,
      );
    }
  }

  /** Serves a definition (or says why there is none); whether there are tools to serve. */
  async #serve(
    program: ResolvedProgram,
    name: string,
    outcome: Outcome,
    how: string,
  ): Promise<boolean> {
    try {
      return await this.#serveNow(program, name, outcome, how);
    } catch (error) {
      this.#settings.logger.warn(
        { program: program.given, err: error },
        `--introspect ${program.given}: not served: its definition could not be written (${messageOf(error)})`,
      );
      return false;
    }
  }

  async #serveNow(
    program: ResolvedProgram,
    name: string,
    outcome: Outcome,
    how: string,
  ): Promise<boolean> {
    const { logger } = this.#settings;
    const fields = { program: program.given, path: program.path };
    if (outcome.kind === 'refused') {
      logger.warn(fields, `--introspect ${program.given}: not served: ${outcome.reason} (${how})`);
      return false;
    }
    // Not `<name>.json` alone: a program named tool_guidance would be read as the guidance file.
    const file = join(this.#dir, `program-${name}.json`);
    await writeFileAtomicAt(file, JSON.stringify(outcome.definition));
    this.#labels.set(file, `--introspect ${program.given}`);
    const tools = leafCount(outcome.definition);
    logger.info(
      { ...fields, tools },
      `--introspect ${program.given}: found ${String(tools)} tools in the help of ${program.path} (${how})`,
    );
    return true;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
