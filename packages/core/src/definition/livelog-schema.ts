// The MTDF keys of livelog tools (upstream's `"tool_type": "livelog"` + `livelog{…}`): a
// long-running source command whose output is chunked and sent to an OpenAI-compatible endpoint,
// which answers CLEAN or describes an issue. Part of the single schema source (schema.ts imports
// it); the defaults here are upstream's.
import * as z from 'zod';

/** Defaults of the optional livelog settings (upstream's). */
export const LIVELOG_DEFAULTS = {
  chunkMaxLines: 50,
  chunkMaxSeconds: 30,
  cooldownSeconds: 60,
  llmTimeoutSeconds: 30,
} as const;

/**
 * `${NAME}` and `${NAME:-default}` in base_url and model (upstream ahma-labs) read only variables
 * with this prefix: a tool file (perhaps one that came with a cloned repository) cannot read
 * another server variable, a secret, into a URL, a request or a result the agent reads.
 */
export const LIVELOG_VARIABLE_PREFIX = 'AHMA_LIVELOG_';

/** `${NAME}`: the only form an API key may take in a tool file (the key itself never is there). */
export const API_KEY_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export const toolTypeSchema = z
  .enum(['command', 'livelog'])
  .describe(
    '"command" (default): the tool runs its command. "livelog": the tool starts livelog.source_command as a monitor whose output is checked by an LLM; needs "livelog".',
  );

const llmProvider = z
  .strictObject({
    base_url: z
      .string()
      .min(1)
      .describe(
        'Base URL of the OpenAI-compatible API (http or https), e.g. "http://localhost:11434/v1"; chunks are POSTed to <base_url>/chat/completions. May read a server variable named AHMA_LIVELOG_* as "${NAME}" or "${NAME:-default}" (upstream ahma-labs).',
      ),
    model: z
      .string()
      .min(1)
      .describe(
        'Model name, e.g. "llama3.2". May read a server variable named AHMA_LIVELOG_* as "${NAME}" or "${NAME:-default}".',
      ),
    api_key: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The environment variable holding the API key, as "${NAME}" (never the key itself). When the variable is set in the server\'s environment its value is sent as "Authorization: Bearer …".',
      ),
  })
  .describe('The OpenAI-compatible endpoint that checks the chunks.')
  .meta({ id: 'LlmProvider' });

/** Longest `prefilter_regex` taken (a pattern is matched against every line of the source). */
export const PREFILTER_MAX_CHARS = 4096;

const livelogParameter = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .describe(
        'The argument name the tool takes (a string), referenced as "${name}" in source_args and env values.',
      ),
    description: z.string().min(1).describe('What the argument is for, shown to the agent.'),
    required: z
      .boolean()
      .optional()
      .describe(
        'The call must give a non-empty value. Default false: an omitted or empty argument drops every source_args element and env entry that references it.',
      ),
  })
  .describe('A call argument of the livelog tool (upstream ahma-labs).')
  .meta({ id: 'LivelogParameter' });

// Loose (upstream ignores unknown livelog keys): an unknown key is a warning with a did-you-mean,
// given by the livelog checks, and does not reject the file.
export const livelogSchema = z
  .looseObject({
    source_command: z
      .string()
      .min(1)
      .describe('The program to run as the log source ("tail", "adb"), confined like any command.'),
    source_args: z
      .array(z.string())
      .optional()
      .describe(
        'Its arguments, each passed as one argv element. An element may reference call parameters as "${name}": the value is put in its place (never interpreted by a shell); an element referencing a parameter the call omits is left out. Default none.',
      ),
    parameters: z
      .array(livelogParameter)
      .optional()
      .describe('Call arguments of the tool (strings), substituted into source_args and env.'),
    env: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'Environment variables set for the source (and clear_command). A value may reference call parameters as "${name}"; an entry referencing a parameter the call omits is left out.',
      ),
    clear_command: z
      .array(z.string())
      .optional()
      .describe(
        'Arguments of source_command for a run made once before the source starts, e.g. ["logcat", "-c"] to clear a log buffer; confined and supervised like the source, with the same env. A failure is reported and the source starts anyway. A call can skip it with "clear": false.',
      ),
    prefilter_regex: z
      .string()
      .min(1)
      .max(PREFILTER_MAX_CHARS)
      .optional()
      .describe(
        'Only lines matching this regular expression (Rust regex syntax as upstream: a leading (?i) is taken) are sent to the endpoint; the result still has every line.',
      ),
    structured_output: z
      .boolean()
      .optional()
      .describe(
        'Upstream asks the model for JSON alerts; Ahma accepts it with a warning and keeps plain-text alerts.',
      ),
    detection_prompt: z
      .string()
      .min(1)
      .describe('What counts as an issue, in plain words, for the LLM.'),
    llm_provider: llmProvider,
    chunk_max_lines: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe(
        `Send a chunk once it has this many lines. Default ${String(LIVELOG_DEFAULTS.chunkMaxLines)}.`,
      ),
    chunk_max_seconds: z
      .number()
      .int()
      .min(1)
      .max(3600)
      .optional()
      .describe(
        `Send a chunk at the latest this many seconds after its first line. Default ${String(LIVELOG_DEFAULTS.chunkMaxSeconds)}.`,
      ),
    cooldown_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .optional()
      .describe(
        `At most one alert per this many seconds; issues found meanwhile are summed up in one alert when it ends. Default ${String(LIVELOG_DEFAULTS.cooldownSeconds)}.`,
      ),
    llm_timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(600)
      .optional()
      .describe(
        `Give up on one request to the endpoint after this many seconds. Default ${String(LIVELOG_DEFAULTS.llmTimeoutSeconds)}.`,
      ),
  })
  .describe('Settings of a "tool_type": "livelog" tool.')
  .meta({ id: 'Livelog' });

export type LivelogDefinition = z.infer<typeof livelogSchema>;
export type LivelogParameterDefinition = z.infer<typeof livelogParameter>;

/** The livelog keys Ahma knows (any other is warned about and ignored). */
export const LIVELOG_KEYS: readonly string[] = Object.keys(livelogSchema.shape);
export type ToolType = z.infer<typeof toolTypeSchema>;
