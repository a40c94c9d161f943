// The tools a server offers right now: the built-ins, the loaded definitions (the project's, the
// bundles', then --introspect's, SPEC §15) that passed their availability checks, then the
// registered commands (SPEC §8) whose names no other tool has, then the remote MCP servers' tools
// (SPEC §10) whose names no other tool has. Reloading (hot reload, a revealed bundle) builds a
// whole new set and swaps it in at once, so a call never sees half of an edit; reloads run one at
// a time, so a late one never swaps in a set older than what an earlier one served.
import {
  ASYNC_GUIDANCE_KEY,
  RESERVED_TOOL_NAMES,
  availableTools,
  checkAvailability,
  formatAvailability,
  formatDiagnostic,
  loadTools,
  type CheckedDefinition,
  type Engine,
  type GuidanceBlocks,
  type LoadedTool,
  type RegisteredCommand,
  type ResolvedToolsDir,
} from '@ahma/core';
import type { Logger } from 'pino';
import { definitionTool } from './definition.js';
import { withIntrospected, type IntrospectedTools } from './introspected/merge.js';
import { livelogTool } from './livelog.js';
import { operationTools } from './operations.js';
import { outputTool } from './output.js';
import { writeStdinTool } from './write-stdin.js';
import { registeredTool } from './registered.js';
import { shellTool } from './shell.js';
import type { ToolContext, ToolContextBase, ToolEntry } from './tool.js';

export interface ToolSetOptions {
  readonly toolsDir: ResolvedToolsDir;
  readonly catalogDir: string;
  /** The bundled definitions to serve, read at every load (`--tools`, then revealed bundles). */
  readonly bundled: () => readonly string[];
  /** Built-ins besides sandboxed_shell, status, await, cancel, output and write_stdin, listed after them. */
  readonly builtIns?: readonly ToolEntry[];
  /** The registered commands, read at every load and refresh (none without --registry). */
  readonly registered?: () => readonly RegisteredCommand[];
  /** The remote MCP servers' tools (--mcp-config), read at every load and refresh. */
  readonly remote?: () => readonly ToolEntry[];
  /**
   * SPEC §15: the definitions --introspect read from programs' help, loaded at every load after the
   * project's and the bundles', which win a name.
   */
  readonly introspected?: IntrospectedTools;
  /**
   * R7.14: the sandbox profiles enabled at start. A loaded definition naming others gets none of
   * them (a tool file never widens the sandbox): a warning says which flag would.
   */
  readonly profiles?: readonly string[];
  readonly engine: Engine;
  readonly logger: Logger;
  /** What every tool handler gets, besides the current definition tools. */
  readonly context: ToolContextBase;
}

/** A definition being served: where it came from and the tools of it that are listed. */
export interface ServedDefinition {
  readonly file: string;
  readonly tools: readonly string[];
}

export class ToolSet {
  readonly #options: ToolSetOptions;
  #entries: readonly ToolEntry[] = [];
  /** Built-ins and definition tools: what a registered command's name may not be. */
  #fixed: ReadonlyMap<string, ToolEntry> = new Map();
  /** The tool of each registered command, made once per command (a change replaces the object). */
  #registeredTools = new WeakMap<RegisteredCommand, ToolEntry>();
  #context: ToolContext | undefined;
  #byName: ReadonlyMap<string, LoadedTool> = new Map();
  #definitions: readonly CheckedDefinition[] = [];
  #guidance: GuidanceBlocks | undefined;
  #loading: Promise<unknown> = Promise.resolve();
  /** Files already warned about their profiles (with which), so a reload does not repeat it. */
  readonly #profileWarnings = new Set<string>();
  /** Introspected definitions already said to be left out (and why), said once. */
  readonly #leftOut = new Set<string>();

  constructor(options: ToolSetOptions) {
    this.#options = options;
  }

  /** Tools in list order. */
  get entries(): readonly ToolEntry[] {
    return this.#entries;
  }

  /**
   * Who owns `name` besides the registry: "a built-in tool", or the tool file's tool; undefined
   * when the name is free for a registered command.
   */
  ownerOf(name: string): string | undefined {
    if (RESERVED_TOOL_NAMES.has(name)) return 'the name of a built-in tool';
    const loaded = this.#byName.get(name);
    return loaded === undefined ? undefined : `the name of a tool from ${loaded.file}`;
  }

  /** Re-lists after the registered commands changed; no file is read. */
  refresh(): void {
    this.#compose();
  }

  /** The served definitions by name, with the tools of each that are listed (R1.2 overrides show). */
  served(): ReadonlyMap<string, ServedDefinition> {
    const served = new Map<string, ServedDefinition>();
    for (const entry of this.#definitions) {
      const tools = entry.leaves.map((leaf) => leaf.name).filter((name) => this.#byName.has(name));
      served.set(entry.definition.name, { file: entry.file, tools });
    }
    return served;
  }

  /**
   * Loads (or reloads) the definitions, runs their availability checks and swaps the new set in.
   * A file that breaks keeps its last good definition; a deleted file's tools go. Resolves to
   * whether the listed tools changed (what tools/list_changed is for).
   */
  load(): Promise<boolean> {
    const next = this.#loading.then(() => this.#load());
    this.#loading = next.catch(() => undefined);
    return next;
  }

  async #load(): Promise<boolean> {
    const { logger, engine } = this.#options;
    const before = JSON.stringify(this.#entries.map((entry) => entry.tool));
    const project = await loadTools({
      toolsDir: this.#options.toolsDir,
      catalogDir: this.#options.catalogDir,
      bundled: this.#options.bundled(),
      lastGood: this.#definitions,
      ...(this.#guidance === undefined ? {} : { lastGoodGuidance: this.#guidance }),
    });
    const introspected = await this.#options.introspected?.load();
    const loaded =
      introspected === undefined
        ? project
        : withIntrospected(project, introspected, (file, why) => this.#warnOnce(file, why));
    for (const problem of loaded.diagnostics) {
      // R5.2: an invalid file is logged with its diagnostics and skipped; the server still serves.
      // A warning does not reject its file: it is logged and the file loads.
      logger.warn(
        { file: problem.file, pointer: problem.pointer, severity: problem.severity },
        problem.severity === 'warning'
          ? `tool definition warning (loaded): ${formatDiagnostic(problem)}`
          : `tool definition rejected: ${formatDiagnostic(problem)}`,
      );
    }
    for (const file of loaded.keptLastGood) {
      logger.warn({ file }, 'the edited file is invalid; its last good content stays in use');
    }
    this.#warnProfiles(loaded.definitions);

    const availability = await checkAvailability(loaded, { executor: engine.executor });
    for (const failed of availability.failed) {
      logger.warn(
        {
          file: failed.file,
          pointer: failed.pointer,
          tools: failed.tools,
          install: failed.installInstructions,
        },
        `tool unavailable: ${formatAvailability(failed)}`,
      );
    }
    const tools = availableTools(loaded.tools, availability);

    const context = {
      ...this.#options.context,
      definitionTools: () => this.#byName,
    };
    this.#definitions = loaded.definitions;
    this.#guidance = loaded.guidance;
    this.#byName = new Map(tools.map((tool) => [tool.name, tool]));
    this.#context = context;
    this.#registeredTools = new WeakMap();
    const fixed = [
      shellTool(context, this.#asyncGuidance()),
      ...operationTools(context),
      outputTool(context),
      writeStdinTool(context),
      ...(this.#options.builtIns ?? []),
      ...tools.map((tool) =>
        tool.leaf.livelog === undefined
          ? definitionTool(tool, context)
          : livelogTool(tool, context),
      ),
    ];
    this.#fixed = new Map(fixed.map((entry) => [entry.tool.name, entry]));
    this.#compose();
    logger.info(
      { tools: this.#entries.map((entry) => entry.tool.name) },
      `serving ${String(this.#entries.length)} tools`,
    );
    return JSON.stringify(this.#entries.map((entry) => entry.tool)) !== before;
  }

  /** R7.14: a definition naming profiles not enabled runs without them; the log says so, once. */
  #warnProfiles(definitions: readonly CheckedDefinition[]): void {
    const enabled = this.#options.profiles ?? [];
    for (const { file, definition } of definitions) {
      const profiles = (definition.sandbox_profiles ?? []).filter((p) => !enabled.includes(p));
      const key = `${file}\u0000${profiles.join(',')}`;
      if (profiles.length === 0 || this.#profileWarnings.has(key)) continue;
      this.#profileWarnings.add(key);
      this.#options.logger.warn(
        { file, tool: definition.name, profiles },
        `${definition.name} names sandbox profiles that are not enabled (${profiles.join(', ')}): ` +
          `a tool file never widens the sandbox; the person running Ahma can, with --profile ${profiles.join(',')}`,
      );
    }
  }

  /** SPEC §15: an introspected definition not served (a name taken), said once per reason. */
  #warnOnce(file: string, why: string): void {
    const key = `${file}\u0000${why}`;
    if (this.#leftOut.has(key)) return;
    this.#leftOut.add(key);
    this.#options.logger.warn({ file }, `${file}: not served: ${why}`);
  }

  /** The guidance block async tools' descriptions end with. */
  #asyncGuidance(): string {
    return this.#guidance?.[ASYNC_GUIDANCE_KEY] ?? '';
  }

  /** The fixed tools, then each registered command whose name is free. */
  #compose(): void {
    const context = this.#context;
    if (context === undefined) return; // not loaded yet: the load composes
    const registered = (this.#options.registered?.() ?? []).flatMap((command) => {
      if (this.#fixed.has(command.name)) return []; // list_commands says so
      let entry = this.#registeredTools.get(command);
      if (entry === undefined) {
        entry = registeredTool(command, context, this.#asyncGuidance());
        this.#registeredTools.set(command, entry);
      }
      return [entry];
    });
    const taken = new Set([...this.#fixed.keys(), ...registered.map((entry) => entry.tool.name)]);
    // A remote tool whose name another tool (or another remote's) has is not served: the first
    // keeps it, and the log says which was left out.
    const remote = (this.#options.remote?.() ?? []).filter((entry) => {
      if (!taken.has(entry.tool.name)) {
        taken.add(entry.tool.name);
        return true;
      }
      this.#options.logger.warn(
        { tool: entry.tool.name },
        'remote tool not offered: the name is taken',
      );
      return false;
    });
    this.#entries = [...this.#fixed.values(), ...registered, ...remote];
  }
}
