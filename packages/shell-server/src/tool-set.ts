// The tools a server offers right now: the loaded definitions that passed their availability
// checks, plus the built-ins. Reloading (hot reload) builds a whole new set and swaps it in at
// once, so a call never sees half of an edit.
import {
  ASYNC_GUIDANCE_KEY,
  availableTools,
  checkAvailability,
  formatAvailability,
  formatDiagnostic,
  loadTools,
  type CheckedDefinition,
  type Engine,
  type GuidanceBlocks,
  type LoadedTool,
  type ResolvedToolsDir,
} from '@ahma/core';
import type { Logger } from 'pino';
import { definitionTool, operationTools, shellTool, type ToolEntry } from './mcp/tools.js';
import type { ToolContextBase } from './mcp/tools.js';

export interface ToolSetOptions {
  readonly toolsDir: ResolvedToolsDir;
  readonly catalogDir: string;
  readonly bundled: readonly string[];
  readonly engine: Engine;
  readonly logger: Logger;
  /** What every tool handler gets, besides the current definition tools. */
  readonly context: ToolContextBase;
}

export class ToolSet {
  readonly #options: ToolSetOptions;
  #entries: readonly ToolEntry[] = [];
  #byName: ReadonlyMap<string, LoadedTool> = new Map();
  #definitions: readonly CheckedDefinition[] = [];
  #guidance: GuidanceBlocks | undefined;

  constructor(options: ToolSetOptions) {
    this.#options = options;
  }

  /** Tools in list order. */
  get entries(): readonly ToolEntry[] {
    return this.#entries;
  }

  /**
   * Loads (or reloads) the definitions, runs their availability checks and swaps the new set in.
   * A file that breaks keeps its last good definition; a deleted file's tools go.
   */
  async load(): Promise<void> {
    const { logger, engine } = this.#options;
    const loaded = await loadTools({
      toolsDir: this.#options.toolsDir,
      catalogDir: this.#options.catalogDir,
      bundled: this.#options.bundled,
      lastGood: this.#definitions,
      ...(this.#guidance === undefined ? {} : { lastGoodGuidance: this.#guidance }),
    });
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
    this.#entries = [
      shellTool(context, loaded.guidance[ASYNC_GUIDANCE_KEY] ?? ''),
      ...operationTools(context),
      ...tools.map((tool) => definitionTool(tool, context)),
    ];
    logger.info(
      { tools: this.#entries.map((entry) => entry.tool.name) },
      `serving ${String(this.#entries.length)} tools`,
    );
  }
}
