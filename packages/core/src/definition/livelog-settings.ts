// A livelog tool's settings as the runtime uses them: upstream's defaults filled in, the API key
// reduced to the name of the variable that holds it (the key is read only when a monitor starts),
// and upstream ahma-labs' call parameters, env, clear_command and prefilter_regex. What depends on
// the call or the server's environment is resolved when a monitor starts (livelog/start.ts).
import { compilePrefilter, type PrefilterPattern } from '../livelog/prefilter-pattern.js';
import { API_KEY_REFERENCE, LIVELOG_DEFAULTS, type LivelogDefinition } from './livelog-schema.js';
import type { ToolDefinition } from './schema.js';

/** A call argument of the tool (a string), referenced as `${name}`. */
export interface LivelogParameter {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
}

export interface LivelogSettings {
  readonly sourceCommand: string;
  /** As written: `${name}` references are substituted per call. */
  readonly sourceArgs: readonly string[];
  readonly detectionPrompt: string;
  /** Without a trailing "/": requests go to `${baseUrl}/chat/completions`. May read variables. */
  readonly baseUrl: string;
  /** May read variables (`${AHMA_LIVELOG_MODEL:-llama3.2}`). */
  readonly model: string;
  /** The environment variable holding the API key, when the file names one. */
  readonly apiKeyVariable: string | undefined;
  readonly chunkMaxLines: number;
  readonly chunkMaxSeconds: number;
  readonly cooldownSeconds: number;
  readonly llmTimeoutSeconds: number;
  readonly parameters: readonly LivelogParameter[];
  /** Set for the source and the clear run; values as written (`${name}` substituted per call). */
  readonly env: Readonly<Record<string, string>>;
  /** Arguments of sourceCommand for the run made once before the source; undefined: none. */
  readonly clearArgs: readonly string[] | undefined;
  /** Only lines it matches are checked; undefined: every line. */
  readonly prefilter: PrefilterPattern | undefined;
}

/** The call argument that skips clear_command (upstream's). */
export const CLEAR_ARGUMENT = 'clear';

/** The settings of a livelog definition; undefined for every other kind of tool. */
export function livelogSettings(definition: ToolDefinition): LivelogSettings | undefined {
  if (definition.tool_type !== 'livelog' || definition.livelog === undefined) return undefined;
  return resolveLivelog(definition.livelog);
}

export function resolveLivelog(livelog: LivelogDefinition): LivelogSettings {
  const provider = livelog.llm_provider;
  // The checks refuse a pattern that does not compile before a leaf is used.
  const prefilter =
    livelog.prefilter_regex === undefined ? undefined : compilePrefilter(livelog.prefilter_regex);
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
    parameters: (livelog.parameters ?? []).map((parameter) => ({
      name: parameter.name,
      description: parameter.description,
      required: parameter.required ?? false,
    })),
    env: livelog.env ?? {},
    clearArgs: livelog.clear_command,
    prefilter: prefilter?.ok === true ? prefilter.pattern : undefined,
  };
}

/**
 * The tool's own arguments in its inputSchema (upstream's): each parameter a string (a required
 * one non-empty), and `clear` when it has a clear_command.
 */
export function livelogInputSchema(settings: LivelogSettings): {
  readonly properties: Record<string, Record<string, unknown>>;
  readonly required: string[];
} {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const parameter of settings.parameters) {
    properties[parameter.name] = {
      type: 'string',
      description: parameter.description,
      ...(parameter.required ? { minLength: 1 } : {}),
    };
  }
  if (settings.clearArgs !== undefined) {
    properties[CLEAR_ARGUMENT] = {
      type: 'boolean',
      description: `Run the tool's clear command (${[settings.sourceCommand, ...settings.clearArgs].join(' ')}) once before monitoring starts. Default true.`,
    };
  }
  const required = settings.parameters.filter((p) => p.required).map((p) => p.name);
  return { properties, required };
}
