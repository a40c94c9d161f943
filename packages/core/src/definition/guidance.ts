// Guidance blocks: short texts prepended to tool descriptions so the agent knows how a tool behaves
// (R2.4/R3.5). tool_guidance.json in the tools directory adds blocks or overrides these defaults.

/** The file in a tools directory that holds guidance blocks rather than a tool definition. */
export const GUIDANCE_FILE_NAME = 'tool_guidance.json';

export const ASYNC_GUIDANCE_KEY = 'async_behavior';
export const SYNC_GUIDANCE_KEY = 'sync_behavior';

export type GuidanceBlocks = Readonly<Record<string, string>>;

/** Built-in blocks, available to every definition whether or not a guidance file exists. */
export const DEFAULT_GUIDANCE: GuidanceBlocks = {
  [ASYNC_GUIDANCE_KEY]:
    'Runs in the background: a command that finishes within the server\'s inline wait (a few seconds by default) answers with its result (exit code and output) right away; otherwise the call returns an operation_id, and once the command finishes its result is put before the result of your next tool call (any tool), once. Continue with other work meanwhile; call `await` only when you cannot proceed without the result. Pass execution_mode "Synchronous" to make one call wait for its result (for commands well under a minute: clients give up on a request after about 60 s, which cancels the command).',
  [SYNC_GUIDANCE_KEY]:
    'Runs synchronously: the call blocks until the command finishes and returns its exit code and output.',
};

/** Merges a guidance file's blocks over the defaults. */
export function mergeGuidance(fileBlocks: GuidanceBlocks | undefined): GuidanceBlocks {
  return { ...DEFAULT_GUIDANCE, ...fileBlocks };
}
