// A livelog tool's settings as the runtime uses them: upstream's defaults filled in, the API key
// reduced to the name of the variable that holds it (the key is read only when a monitor starts).
import { API_KEY_REFERENCE, LIVELOG_DEFAULTS, type LivelogDefinition } from './livelog-schema.js';
import type { ToolDefinition } from './schema.js';

export interface LivelogSettings {
  readonly sourceCommand: string;
  readonly sourceArgs: readonly string[];
  readonly detectionPrompt: string;
  /** Without a trailing "/": requests go to `${baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  readonly model: string;
  /** The environment variable holding the API key, when the file names one. */
  readonly apiKeyVariable: string | undefined;
  readonly chunkMaxLines: number;
  readonly chunkMaxSeconds: number;
  readonly cooldownSeconds: number;
  readonly llmTimeoutSeconds: number;
}

/** The settings of a livelog definition; undefined for every other kind of tool. */
export function livelogSettings(definition: ToolDefinition): LivelogSettings | undefined {
  if (definition.tool_type !== 'livelog' || definition.livelog === undefined) return undefined;
  return resolveLivelog(definition.livelog);
}

export function resolveLivelog(livelog: LivelogDefinition): LivelogSettings {
  const provider = livelog.llm_provider;
  return {
    sourceCommand: livelog.source_command,
    sourceArgs: livelog.source_args ?? [],
    detectionPrompt: livelog.detection_prompt,
    baseUrl: provider.base_url.replace(/\/+$/, ''),
    model: provider.model,
    apiKeyVariable:
      provider.api_key === undefined ? undefined : API_KEY_REFERENCE.exec(provider.api_key)?.[1],
    chunkMaxLines: livelog.chunk_max_lines ?? LIVELOG_DEFAULTS.chunkMaxLines,
    chunkMaxSeconds: livelog.chunk_max_seconds ?? LIVELOG_DEFAULTS.chunkMaxSeconds,
    cooldownSeconds: livelog.cooldown_seconds ?? LIVELOG_DEFAULTS.cooldownSeconds,
    llmTimeoutSeconds: livelog.llm_timeout_seconds ?? LIVELOG_DEFAULTS.llmTimeoutSeconds,
  };
}
