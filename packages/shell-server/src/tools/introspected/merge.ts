// SPEC §15 --introspect: the definitions read from programs' help, served beside the project's tool
// files and the revealed bundles. They are loaded and checked like a tools directory's
// (introspection.ts) and added here to what the project and the bundles give, which win a name:
// the person wrote or chose those. An introspected definition whose name, or one of whose tools'
// names, is taken is not served, and the log says why. This file is loaded by every server; what
// reads help (and @ahma/introspect) is imported only when --introspect is given.
import {
  ASYNC_GUIDANCE_KEY,
  DEFAULT_GUIDANCE,
  type GuidanceBlocks,
  type LoadedTool,
  type loadTools,
} from '@ahma/core';

export type LoadResult = Awaited<ReturnType<typeof loadTools>>;

export interface IntrospectedTools {
  /**
   * The definitions read so far, checked as a tools directory's are; each one's `file` says which
   * --introspect program it came from.
   */
  load(): Promise<LoadResult>;
}

/**
 * `loaded` with the introspected definitions whose names are free; `leftOut` hears of the others.
 * Their descriptions start with the async guidance in force: the project's tool_guidance.json may
 * reword it, and they were described with the default.
 */
export function withIntrospected(
  loaded: LoadResult,
  introspected: LoadResult,
  leftOut: (file: string, why: string) => void,
): LoadResult {
  const definitions = new Map(loaded.definitions.map((entry) => [entry.definition.name, entry]));
  const tools = new Map(loaded.tools.map((tool) => [tool.name, tool]));
  const kept = introspected.definitions.filter((entry) => {
    const same = definitions.get(entry.definition.name);
    if (same !== undefined) {
      leftOut(entry.file, `${same.file} has its name, ${entry.definition.name}, and is served`);
      return false;
    }
    const clash = entry.leaves.find((leaf) => leaf.enabled && tools.has(leaf.name));
    if (clash !== undefined) {
      leftOut(
        entry.file,
        `its tool ${clash.name} has the name of a tool from ${tools.get(clash.name)?.file ?? '?'}`,
      );
      return false;
    }
    return true;
  });
  const files = new Set(kept.map((entry) => entry.file));
  return {
    ...loaded,
    definitions: [...loaded.definitions, ...kept],
    tools: [
      ...loaded.tools,
      ...introspected.tools
        .filter((tool) => files.has(tool.file))
        .map((tool) => withGuidance(tool, loaded.guidance)),
    ],
    diagnostics: [...loaded.diagnostics, ...introspected.diagnostics],
  };
}

/** The tool's description with the async guidance block in force instead of the default one. */
function withGuidance(tool: LoadedTool, guidance: GuidanceBlocks): LoadedTool {
  const standard = DEFAULT_GUIDANCE[ASYNC_GUIDANCE_KEY] ?? '';
  const inForce = guidance[ASYNC_GUIDANCE_KEY] ?? standard;
  if (tool.leaf.synchronous || inForce === standard || !tool.description.startsWith(standard)) {
    return tool;
  }
  return { ...tool, description: inForce + tool.description.slice(standard.length) };
}
