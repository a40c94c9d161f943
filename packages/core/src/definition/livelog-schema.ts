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
        'Base URL of the OpenAI-compatible API (http or https), e.g. "http://localhost:11434/v1"; chunks are POSTed to <base_url>/chat/completions.',
      ),
    model: z.string().min(1).describe('Model name, e.g. "llama3.2".'),
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

export const livelogSchema = z
  .strictObject({
    source_command: z
      .string()
      .min(1)
      .describe('The program to run as the log source ("tail", "adb"), confined like any command.'),
    source_args: z
      .array(z.string())
      .optional()
      .describe('Its arguments, each passed as one argv element. Default none.'),
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
export type ToolType = z.infer<typeof toolTypeSchema>;
