// Bundles on demand (SPEC §3): the bundled catalogs (tools/*.json), whether each one's program is
// installed here, and which are revealed (served). `--tools` reveals from the start; activate_tools
// lists and reveals more at run time. The catalog and its availability probes are read on first
// use and cached, so starting the server costs nothing for bundles nobody asks about.
import { dirname, resolve } from 'node:path';
import {
  checkAvailability,
  closestMatch,
  formatDiagnostic,
  readCatalog,
  type CheckedDefinition,
  type Executor,
} from '@ahma/core';
import type { Logger } from 'pino';
import type { ServedDefinition } from './tool-set.js';

/** One bundle as activate_tools shows it. */
export interface BundleStatus {
  readonly name: string;
  /** The first sentence of the definition's description. */
  readonly summary: string;
  /** How many tools it adds here (those its availability checks leave; all when not installed). */
  readonly tools: number;
  readonly installed: boolean;
  readonly revealed: boolean;
  /** A tool file of the project with this name replaces the bundled definition (R1.2). */
  readonly overridden: boolean;
  /** When not installed: why (`"gh" not found on PATH`) and how to install it. */
  readonly reason?: string;
  readonly install_instructions?: string;
}

export type RevealOutcome =
  | {
      readonly kind: 'revealed';
      /** Bundles this call revealed (empty: nothing changed). */
      readonly revealed: readonly string[];
      readonly alreadyRevealed: readonly string[];
      /** The tools of the named bundles now listed, in list order. */
      readonly tools: readonly string[];
      /** Named bundles a project tool file replaces: the file served for each. */
      readonly overridden: readonly { readonly name: string; readonly file: string }[];
      /**
       * R7.14: named bundles whose sandbox profiles are not enabled: revealing never widens the
       * sandbox, only the operator does (--profile at start).
       */
      readonly profilesNotEnabled: readonly ProfilesNotEnabled[];
    }
  | { readonly kind: 'unknown'; readonly unknown: readonly UnknownBundle[] }
  | { readonly kind: 'not_installed'; readonly missing: readonly BundleStatus[] };

export interface ProfilesNotEnabled {
  readonly bundle: string;
  readonly profiles: readonly string[];
}

export interface UnknownBundle {
  readonly name: string;
  readonly suggestion: string | undefined;
  /** Every bundle name, for the agent to pick from. */
  readonly known: readonly string[];
}

export interface BundlesOptions {
  readonly catalogDir: string;
  /** `--tools`: revealed from the start. */
  readonly revealed: readonly string[];
  /** R7.14: the sandbox profiles enabled at start (--profile and the --tools bundles' own). */
  readonly profiles?: readonly string[];
  /** Runs the availability probes, confined like every command. */
  readonly executor: Executor;
  readonly logger: Logger;
  /** Rebuilds the served tools from `revealed` and tells the client if its list changed. */
  readonly reload: () => Promise<void>;
  /** The definitions served now, by name. */
  readonly served: () => ReadonlyMap<string, ServedDefinition>;
}

/** What a probe found for one bundle. */
interface Availability {
  readonly tools: number;
  readonly reason: string | undefined;
  readonly installInstructions: string | undefined;
}

export class Bundles {
  readonly #options: BundlesOptions;
  readonly #revealed: Set<string>;
  #catalog: Promise<ReadonlyMap<string, CheckedDefinition>> | undefined;
  /** The catalog once read (every #status runs after #readCatalog has resolved). */
  #catalogNow: ReadonlyMap<string, CheckedDefinition> = new Map();
  readonly #availability = new Map<string, Availability>();
  #checkedAll: Promise<void> | undefined;
  /** The reveal in progress: reveals run one at a time (see reveal). */
  #revealing: Promise<unknown> = Promise.resolve();

  constructor(options: BundlesOptions) {
    this.#options = options;
    this.#revealed = new Set(options.revealed);
  }

  /** The bundled definitions to serve: `--tools` first, then revealed ones in reveal order. */
  get revealed(): readonly string[] {
    return [...this.#revealed];
  }

  /** Every bundle (installed or not), by name; availability probed once, on first use. */
  async list(): Promise<BundleStatus[]> {
    const catalog = await this.#readCatalog();
    await (this.#checkedAll ??= this.#check([...catalog.values()]));
    return [...catalog.keys()].map((name) => this.#status(name));
  }

  /** Names that are not bundles, with a did-you-mean each; empty when all are known. */
  async unknown(names: readonly string[]): Promise<UnknownBundle[]> {
    const catalog = await this.#readCatalog();
    const known = [...catalog.keys()];
    return names
      .filter((name) => !catalog.has(name))
      .map((name) => ({ name, suggestion: suggestBundle(name, known), known }));
  }

  /**
   * Reveals the named bundles: all or nothing. An unknown name or a program missing here refuses
   * the whole call; already revealed ones are no news (no reload, so no tools/list_changed).
   * Reveals run one at a time: a call that finds a bundle already revealed answers only after the
   * reveal that added it has reloaded, so its answer lists the bundle's tools (read from what is
   * served) instead of none.
   */
  reveal(names: readonly string[]): Promise<RevealOutcome> {
    const next = this.#revealing.then(() => this.#reveal(names));
    this.#revealing = next.catch(() => undefined);
    return next;
  }

  async #reveal(names: readonly string[]): Promise<RevealOutcome> {
    const wanted = [...new Set(names)];
    const unknown = await this.unknown(wanted);
    if (unknown.length > 0) return { kind: 'unknown', unknown };
    const catalog = await this.#readCatalog();
    const fresh = wanted.filter((name) => !this.#revealed.has(name));
    // A bundle a project tool file replaces is served from that file whatever the bundled
    // program's state: revealing it is never refused and changes no listed tool (R1.2).
    const probed = fresh.filter((name) => this.#overriddenBy(name) === undefined);
    if (probed.length > 0) {
      // Probed again: the program may have been installed since the last list.
      await this.#check(probed.flatMap((name) => catalog.get(name) ?? []));
      const missing = probed.map((name) => this.#status(name)).filter((s) => !s.installed);
      if (missing.length > 0) return { kind: 'not_installed', missing };
    }
    const added = fresh;
    for (const name of added) this.#revealed.add(name);
    if (added.length > 0) await this.#options.reload();
    const served = this.#options.served();
    return {
      kind: 'revealed',
      revealed: added,
      alreadyRevealed: wanted.filter((name) => !added.includes(name)),
      tools: wanted.flatMap((name) => served.get(name)?.tools ?? []),
      overridden: wanted.flatMap((name) => {
        const file = this.#overriddenBy(name);
        return file === undefined ? [] : [{ name, file }];
      }),
      profilesNotEnabled: wanted.flatMap((bundle) => {
        const enabled = this.#options.profiles ?? [];
        const named = catalog.get(bundle)?.definition.sandbox_profiles ?? [];
        const profiles = named.filter((profile) => !enabled.includes(profile));
        return profiles.length === 0 ? [] : [{ bundle, profiles }];
      }),
    };
  }

  /** The project tool file served in place of this bundle, if one replaces it (R1.2). */
  #overriddenBy(name: string): string | undefined {
    const file = this.#options.served().get(name)?.file;
    return file !== undefined && dirname(file) !== resolve(this.#options.catalogDir)
      ? file
      : undefined;
  }

  #status(name: string): BundleStatus {
    const definition = this.#catalogNow.get(name);
    const summary = firstSentence(definition?.definition.description ?? '');
    const revealed = this.#revealed.has(name);
    // Replaced by a project tool file: what is served is that file, so its availability (the tools
    // of it listed now) is the bundle's; the bundled program's probe says nothing about it.
    if (this.#overriddenBy(name) !== undefined) {
      const tools = this.#options.served().get(name)?.tools.length ?? 0;
      return {
        name,
        summary,
        tools,
        installed: tools > 0,
        revealed,
        overridden: true,
        ...(tools > 0 ? {} : { reason: 'the project tool file replacing it serves no tool here' }),
      };
    }
    const availability = this.#availability.get(name);
    const enabled = definition?.leaves.filter((leaf) => leaf.enabled).length ?? 0;
    const installed = availability !== undefined && availability.reason === undefined;
    return {
      name,
      summary,
      tools: installed ? availability.tools : enabled,
      installed,
      revealed,
      overridden: false,
      ...(installed || availability?.reason === undefined ? {} : { reason: availability.reason }),
      ...(installed || availability?.installInstructions === undefined
        ? {}
        : { install_instructions: availability.installInstructions }),
    };
  }

  #readCatalog(): Promise<ReadonlyMap<string, CheckedDefinition>> {
    return (this.#catalog ??= (async () => {
      const { logger, catalogDir } = this.#options;
      try {
        const read = await readCatalog(catalogDir);
        for (const problem of read.diagnostics) {
          logger.warn(`bundled definition rejected: ${formatDiagnostic(problem)}`);
        }
        this.#catalogNow = new Map(read.definitions.map((e) => [e.definition.name, e]));
      } catch (error) {
        // An installation without tools/ still serves; activate_tools then lists nothing.
        logger.warn({ err: error, catalogDir }, 'cannot read the bundled catalog');
      }
      return this.#catalogNow;
    })());
  }

  /** Runs the availability probes of these bundles (at once, each command line once). */
  async #check(definitions: readonly CheckedDefinition[]): Promise<void> {
    const report = await checkAvailability({ definitions }, { executor: this.#options.executor });
    for (const entry of definitions) {
      const failed = report.failed.filter((check) => check.file === entry.file);
      const hidden = new Set(
        report.unavailable.filter((tool) => tool.file === entry.file).map((tool) => tool.name),
      );
      const tools = entry.leaves.filter((leaf) => leaf.enabled && !hidden.has(leaf.name)).length;
      // Installed when something is left to serve; else the outermost failed check says why.
      const cause = tools === 0 ? failed[0] : undefined;
      this.#availability.set(entry.definition.name, {
        tools,
        reason: tools === 0 ? (cause?.reason ?? 'no tool of it is available here') : undefined,
        installInstructions: cause?.installInstructions,
      });
    }
  }
}

/**
 * The bundle an unknown name probably meant. Bundle names are short, so besides a small edit
 * distance, swapped letters ("gti") and a prefix ("file", "python3") count too.
 */
export function suggestBundle(name: string, known: readonly string[]): string | undefined {
  const word = name.toLowerCase();
  const letters = (text: string) => [...text].sort().join('');
  return (
    closestMatch(word, known) ??
    known.find((candidate) => letters(candidate) === letters(word)) ??
    known.find(
      (candidate) => word.length >= 2 && (candidate.startsWith(word) || word.startsWith(candidate)),
    )
  );
}

/** The first sentence of a description: up to the first ". " (or all of a one-sentence text). */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  return end === -1 ? flat : flat.slice(0, end + 1);
}

/** The longest install instruction the list's text shows (the full one is in structuredContent). */
export const INSTALL_TEXT_LIMIT = 240;

/**
 * An install instruction as one line of at most INSTALL_TEXT_LIMIT characters: the list shows one
 * per missing bundle to the model, so a long one must not swell the answer.
 */
export function installLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= INSTALL_TEXT_LIMIT ? flat : `${flat.slice(0, INSTALL_TEXT_LIMIT - 1)}…`;
}
